universe   = vanilla
executable = x_sleep.pl
log = lib_auth_protocol-ctb.log
output = lib_auth_protocol-ctb.out
error = lib_auth_protocol-ctb.err
Notification = NEVER
arguments  = 45
+Owner = Undefined
queue

