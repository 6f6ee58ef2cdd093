# Harvested from HTCondor's docs/apis/python-bindings/tutorials/HTCondor-Introduction.ipynb (all code cells; commit 7491a145f64a)
# by scripts/harvest_api_examples.py.  Only the import lines were changed, from htcondor2 /
# classad2 to htcd.api.  The code is HTCondor's (Apache License 2.0).
# ruff: noqa
# mypy: ignore-errors

import htcd.api as htcondor
from htcd.api import classad as classad

coll = htcondor.Collector()  # create the object representing the collector
schedd_ad = coll.locate(htcondor.DaemonTypes.Schedd) # locate the default schedd

print(schedd_ad)

coll.query(htcondor.AdTypes.Schedd, projection=["Name", "MyAddress", "DaemonCoreDutyCycle"])

import socket # We'll use this to automatically fill in our hostname

name = classad.quote(f"jovyan@{socket.getfqdn()}")
coll.query(
    htcondor.AdTypes.Schedd, 
    constraint=f"Name =?= {name}", 
    projection=["Name", "MyAddress", "DaemonCoreDutyCycle"],
)

schedd = htcondor.Schedd(schedd_ad)
print(schedd)

sub = htcondor.Submit(
    executable = "/bin/sleep",
    arguments = "5m",
)
schedd.submit(sub, count=10)

for job in schedd.query(projection=['ClusterId', 'ProcId', 'JobStatus']):
    print(repr(job))

for ad in schedd.query(constraint = 'ProcId >= 5', projection=['ProcId']):
    print(ad.get('ProcId'))

import getpass

schedd.act(htcondor.JobAction.Remove, f'Owner == "{getpass.getuser()}"')
