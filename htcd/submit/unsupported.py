"""The submit commands and universes htcd refuses, each with the reason the user is shown.

condor_submit knows every name below; htcd has nothing that would act on it, so accepting it
would be a silent promise.  A submit file that uses one is refused at submit with a message
naming the command, the file and line, and the reason.  To support a command, take it out of
this table and give it to ``htcd.submit.commands`` (tests/submit/test_command_coverage.py checks
that every command condor_submit knows is in exactly one of the two).
"""

from __future__ import annotations

import fnmatch

_GRID = "htcd has no grid universe (jobs handed to another batch system or cloud)"
_VM = "htcd has no vm universe"
_JAVA = "htcd runs no java universe (no execute point offers a JVM)"
_PARALLEL = "htcd has no parallel universe (no jobs spanning several slots)"
_STANDARD = "a feature of HTCondor's retired standard universe (remote system calls)"
_CREDENTIALS = "htcd does not manage credentials for jobs (no proxies, tokens or OAuth services)"
_CHECKPOINT_URL = ("htcd keeps a self-checkpointing job's checkpoint in the access point's spool only; it has no "
                   "transfer plugins that store checkpoints at a URL (leave checkpoint_destination out)")
_PLUGIN_TRANSFER = "htcd transfers files itself and has no transfer plugins or URL destinations for output"
_ENCRYPT = "htcd cannot choose per job or per file whether transfers are encrypted"
_LOG = "htcd writes only HTCondor's classic text event log"
_SLOT = "htcd's startd does not hold a claim or pause between a slot's jobs as the job asks"
_SIGNALS = "htcd's starter sends kill_sig (or SIGTERM) and then SIGKILL; it has no signal per cause"
_GPU = "htcd's execute points do not describe their GPUs (no AvailableGPUs properties to match)"
_RETRY_REQUEST = "htcd does not resubmit a job with a bigger request after it runs out of memory or disk"
_CONTAINER = "htcd's container support runs the image as it is: no service ports, target directory or " \
             "shared image cache"
_NOOP = "htcd does not fake job runs"

# command (lower case) -> why htcd refuses it, whatever its value
REFUSED: dict[str, str] = {
    **{name: _GRID for name in (
        "grid_resource", "remote_initialdir", "batch_extra_submit_args", "batch_project", "batch_queue",
        "batch_runtime", "delegate_job_gsi_credentials_lifetime", "wantnametag", "cloud_label_names",
        "aws_access_key_id_file", "aws_secret_access_key_file", "aws_region", "s3_access_key_id_file",
        "s3_secret_access_key_file", "gs_access_key_id_file", "gs_secret_access_key_file",
        "ec2_keyp_air", "ec2_key_pair_file")},
    **{name: _VM for name in ("vm_checkpoint", "vm_disk", "vm_macaddr", "vm_memory", "vm_networking",
                              "vm_networking_type", "vm_no_output_vm", "vm_type", "vm_vcpus", "vm_vnc",
                              "xen_initrd", "xen_kernel", "xen_kernel_params", "xen_root")},
    **{name: _JAVA for name in ("jar_files", "java_vm_args", "java_vm_arguments", "java_vm_arguments2")},
    **{name: _PARALLEL for name in ("node_count", "nodecount", "parallel_script_shadow",
                                    "parallel_script_starter", "rendezvousdir", "want_job_networking")},
    **{name: _STANDARD for name in ("append_files", "buffer_block_size", "buffer_files", "buffer_size",
                                    "compress_files", "fetch_files", "file_remaps", "local_files",
                                    "want_io_proxy", "tool_daemon_args", "tool_daemon_arguments",
                                    "tool_daemon_arguments2", "tool_daemon_cmd", "tool_daemon_error",
                                    "tool_daemon_input", "tool_daemon_output", "suspend_job_at_exec")},
    **{name: _CREDENTIALS for name in ("x509userproxy", "use_x509userproxy", "use_scitokens", "use_scitoken",
                                       "scitokens_file", "use_oauth_services", "useoauthservices",
                                       "docker_send_credentials")},
    "checkpoint_destination": _CHECKPOINT_URL,
    "erase_output_and_error_on_restart": "htcd has no per-job choice whether a restarted job's output and "
                                         "error are erased (a self-checkpointing job's are appended to)",
    **{name: _PLUGIN_TRANSFER for name in ("transfer_plugins", "output_destination", "public_input_files",
                                           "manifest", "manifest_dir", "transfer_common_input",
                                           "preserve_relative_paths", "max_transfer_input_mb",
                                           "max_transfer_output_mb", "skip_if_dataflow")},
    **{name: _ENCRYPT for name in ("encrypt_input_files", "encrypt_output_files", "dont_encrypt_input_files",
                                   "dont_encrypt_output_files")},
    **{name: _LOG for name in ("log_xml", "ulog_execute_attrs")},
    **{name: _SLOT for name in ("keep_claim_idle", "next_job_start_delay", "max_job_retirement_time",
                                "periodic_vacate")},
    "kill_sig_timeout": _SIGNALS,
    **{name: _GPU for name in ("require_gpus", "gpus_minimum_capability", "gpus_maximum_capability",
                               "gpus_minimum_memory", "gpus_minimum_runtime", "cuda_version")},
    **{name: _RETRY_REQUEST for name in ("retry_request_memory", "retry_request_memory_increase",
                                         "retry_request_memory_max", "retry_request_disk")},
    **{name: _CONTAINER for name in ("container_service_names", "container_target_dir", "container_is_common",
                                     "transfer_container", "mount_under_scratch", "docker_override_entrypoint")},
    **{name: _NOOP for name in ("noop_job", "noop_job_exit_code", "noop_job_exit_signal")},
    "output_directory": "htcd puts a job's output in its initial directory (use initialdir or "
                        "transfer_output_remaps)",
    "interactive_executable": "htcd has no interactive jobs (condor_submit -interactive)",
    "interactive_args": "htcd has no interactive jobs (condor_submit -interactive)",
    "run_as_owner": "htcd runs every job as its owner (there is no other choice to make)",
    "load_profile": "a Windows feature (loading the owner's profile)",
    "primary_unix_group": "htcd's starter does not switch the job's primary group",
    "stack_size": "htcd does not set a job's stack size",
    "starter_debug": "htcd's starter logs at its own configured level, not per job",
    "starter_log": "htcd's starter logs at its own configured level, not per job",
    "match_list_length": "htcd's negotiator keeps no per-job list of recent matches",
    "submit_event_user_notes": "htcd's submit event carries submit_event_notes only",
    "submit_event_notes_attrs": "htcd's submit event carries submit_event_notes only",
    "jobset": "htcd has no job sets",
    "on_evict_checks": "htcd has no job transforms on eviction",
    "exit_requirements": "a retired command with no effect in HTCondor",
    "want_ads": "a submit key HTCondor defines but neither documents nor acts on",
    "request_swap": "no htcd slot advertises Swap, so the job could never match",
    "memory_usage": "htcd measures a job's memory use itself (MemoryUsage); request_memory is the request",
}

# Names with a part the user chooses: (glob, reason).
REFUSED_PATTERNS: tuple[tuple[str, str], ...] = (
    ("arc_*", _GRID), ("azure_*", _GRID), ("ec2_*", _GRID), ("gce_*", _GRID), ("cloud_label_*", _GRID),
    ("remote_*", _GRID), ("*_oauth_permissions", _CREDENTIALS), ("*_oauth_resource", _CREDENTIALS),
    ("require_*", "htcd's execute points do not describe the properties of their custom resources"),
    ("*_container_port", _CONTAINER), ("*_hostport", _CONTAINER), ("transform_body_*", "htcd has no job transforms"),
)

# Commands refused only when their value is true: the false value is what htcd does anyway.
REFUSED_WHEN_TRUE: dict[str, str] = {
    "encrypt_execute_directory": "htcd cannot encrypt a job's scratch directory on the execute point",
    "stream_input": "htcd does not stream input to a running job; it is transferred before the job starts",
}

# command -> what htcd does instead, said in a warning when the command is true: the job still gets
# what it asked for in the end (its output), only later.  Real clients write these (dask-jobqueue
# sets Stream_Output = True), so refusing them would refuse their jobs for a matter of timing.
WARNED_WHEN_TRUE: dict[str, str] = {
    "stream_output": "htcd does not stream output while the job runs; it is transferred when the job ends",
    "stream_error": "htcd does not stream output while the job runs; it is transferred when the job ends",
}

# container_image with a URL other than docker://: the execute point would have to fetch it with a
# transfer plugin, and htcd's slots offer none (no HasFileTransferPluginMethods to match).
CONTAINER_URL = "htcd's execute points fetch only docker:// images and .sif files sent with the job"

# Commands htcd honours only for the jobs the access point runs itself (scheduler and local
# universe): there the schedd sends the signal; an execute point's starter has no signal per cause.
AP_ONLY: dict[str, str] = {name: _SIGNALS for name in ("hold_kill_sig", "remove_kill_sig")}

# Universes condor_submit knows that htcd cannot run (unless a plugin registers one of the name).
REFUSED_UNIVERSES: dict[str, str] = {
    "grid": _GRID,
    "vm": _VM,
    "parallel": _PARALLEL,
    "java": _JAVA,
}


def refusal(command: str) -> str | None:
    """Why htcd refuses ``command`` (lower case) whatever its value, or None."""
    reason = REFUSED.get(command)
    if reason is not None:
        return reason
    return next((why for pattern, why in REFUSED_PATTERNS if fnmatch.fnmatchcase(command, pattern)), None)
