universe   = vanilla
executable = x_sleep.pl
log = lib_auth_protocol-negot.log
output = lib_auth_protocol-negot.out
error = lib_auth_protocol-negot.err
Notification = NEVER
arguments  = 45
queue

