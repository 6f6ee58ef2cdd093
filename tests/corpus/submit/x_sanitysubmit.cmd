universe = vanilla
executable = x_sleep.pl
arguements = 5
output = x_sanitysubmit16747.out
error = x_sanitysubmit16747.err
log = x_sanitysubmit16747.log
notification = never
queue
