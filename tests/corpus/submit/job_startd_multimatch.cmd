universe = grid
grid_resource = $$(ResourceName)
executable = /bin/date
log = bug11.log
notification = NEVER
queue 5
