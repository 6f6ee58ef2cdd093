universe     = scheduler
executable   = /bin/date
log          = submit-splice-scaling.log
Notification = NEVER
queue
