universe   = scheduler
executable = x_returnquick.pl
log = job_schedd_job-tracking_van.log
error = job_schedd_job-tracking_van.err
output = job_schedd_job-tracking_van.out
Notification = NEVER
arguments = hello
queue 400

