universe   = vanilla
executable = job_core_io.pl
output = job_core_input_van.out
error = job_core_input_van.err
log = job_core_input_van.log
input	   = job_core_input.in
transfer_files = NEVER
Notification = NEVER
queue

