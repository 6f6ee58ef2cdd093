universe = vanilla
executable = x_sleep.pl
arguments = 30
periodic_hold = true
queue 4
