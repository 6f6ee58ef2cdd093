executable   = ./job_dagman_recovery_preskip-nodeA.pl
universe     = scheduler
output       = job_dagman_recovery_preskip-nodeA.out
error        = job_dagman_recovery_preskip-nodeA.err
log          = job_dagman_recovery_preskip.log
Notification = NEVER
queue
