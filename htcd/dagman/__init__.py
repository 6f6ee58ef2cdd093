"""The DAG language of HTCondor's DAGMan: DAG files -> a checked model, and rescue DAGs.

A pure library, like htcd.submit: it reads DAG files (and the files they INCLUDE and
SPLICE) and checks the submit files they name exist, and never talks to a daemon.  The
runtime (``htcd submit_dag`` and the DAGMan job) is built on it.
"""

from htcd.dagman.errors import DagError, DagWarning, Origin
from htcd.dagman.macros import expand_script_arguments
from htcd.dagman.model import Dag, Node, NodeKind, Script, ScriptKind, Var
from htcd.dagman.options import ParseOptions
from htcd.dagman.parser import parse_dag, parse_dag_text
from htcd.dagman.rescue import RescueState, apply_rescue, read_rescue, rescue_text

__all__ = ["Dag", "DagError", "DagWarning", "Node", "NodeKind", "Origin", "ParseOptions",
           "RescueState", "Script", "ScriptKind", "Var", "apply_rescue", "expand_script_arguments",
           "parse_dag", "parse_dag_text", "read_rescue", "rescue_text"]
