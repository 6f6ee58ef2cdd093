universe   = vanilla
executable = x_lookaround.pl
output = job_flocking_to.out
error = job_flocking_to.err
log = job_flocking_to.log
queue

