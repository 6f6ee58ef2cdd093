##
## This is the skeleton submission file used for the
## job deferral tests for hold 
##
Executable		= ./x_time.pl
Notification	= NEVER

##
## Set the preptime to be large enough so the job can
## get matched. 
##
DeferralPrep 	= 600
