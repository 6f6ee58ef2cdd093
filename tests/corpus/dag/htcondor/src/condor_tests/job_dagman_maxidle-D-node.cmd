universe = vanilla
executable = x_sleep.pl
arguments = 30
queue
