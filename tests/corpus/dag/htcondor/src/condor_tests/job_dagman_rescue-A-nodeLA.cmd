executable   = ./job_dagman_rescue-A-nodeLA.pl
universe     = scheduler
output       = job_dagman_rescue-A-nodeLA.out
error        = job_dagman_rescue-A-nodeLA.err
log          = job_dagman_rescue-A-node.log
Notification = NEVER
queue
