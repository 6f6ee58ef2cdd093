universe   = scheduler
executable = x_doublejeopardy.pl
log = job_core_doublejeopardy_sched.log
error = job_core_doublejeopardy_sched.err
output = job_core_doublejeopardy_sched.out
Notification = NEVER
wantcorefile = false
queue 2

