universe   = vanilla
executable = ./x_job_filexfer_testjob.pl
log = job_filexfer_trans-nodflts_van.log
output = job_filexfer_trans-nodflts_van.out
error = job_filexfer_trans-nodflts_van.err
transfer_input = false
transfer_error = false
transfer_output = false
transfer_executable = false
Notification = NEVER
arguments  = --noinput
queue

