universe   = scheduler
executable = job_core_io.pl
output = job_core_output_sched.out
error = job_core_output_sched.err
log = job_core_output_sched.log
input	   = job_core_output.in
Notification = NEVER
queue

