executable   = /bin/echo
arguments    = OK
universe     = scheduler
output       = $(job).out
error        = $(job).err
log          = job_dagman_splice-O-subdir1.log
Notification = NEVER
queue
