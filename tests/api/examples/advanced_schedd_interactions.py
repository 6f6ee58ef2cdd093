# Harvested from HTCondor's docs/apis/python-bindings/tutorials/Advanced-Schedd-Interactions.ipynb (all code cells; commit 7491a145f64a)
# by scripts/harvest_api_examples.py.  Only the import lines were changed, from htcondor2 /
# classad2 to htcd.api.  The code is HTCondor's (Apache License 2.0).
# ruff: noqa
# mypy: ignore-errors

import htcd.api as htcondor
from htcd.api import classad as classad

schedd = htcondor.Schedd()
sub = htcondor.Submit({
    "executable": "/bin/sleep",
    "arguments": "5m",
    "hold": "True",
})
submit_result = schedd.submit(sub, count=10)
print(submit_result.cluster())

print(len(schedd.query(projection=["ProcID"], constraint=f"ClusterId=={submit_result.cluster()}")))

schedd = htcondor.Schedd()
for ad in schedd.history(
    constraint='true',
    projection=['ProcId', 'ClusterId', 'JobStatus'],
    match=2,  # limit to 2 returned results
):
    print(ad)
