executable   = job_dagman_event_log-node.pl
universe     = local
output       = job_dagman_event_log-node.out
error        = job_dagman_event_log-node.err
log          = job_dagman_event_log-node.log
Notification = NEVER
queue
