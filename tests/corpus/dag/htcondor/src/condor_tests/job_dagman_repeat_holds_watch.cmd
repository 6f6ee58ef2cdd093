executable = job_dagman_repeat_holds_watch.pl
universe = vanilla
arguments = job_dagman_repeat_holds_hold.log
output = job_dagman_repeat_holds_watch.out
error = job_dagman_repeat_holds_watch.err
log = job_dagman_repeat_holds_watch.log
queue
