# SPDX-License-Identifier: Apache-2.0
# Sourced by the batch scripts whose step is resumable (generate, import-hdf5).
#
#   resumable_step srun ... sedpack <command> ... --resumable
#
# The job asks SLURM for the warning signal (#SBATCH --signal=TERM@120: SIGTERM
# to every task 120 s before the time limit; a preemption sends it too). The
# tasks stop cleanly (exit 143); their finished shards stay, named by the job's
# journals (.sedpack-hpc/jobs/). The job then requeues itself (#SBATCH
# --requeue), and the next start runs the same command, which keeps those shards
# and does the rest. Returns the step's exit code.
resumable_step() {
  local rc=0
  "$@" || rc=$?
  if [ "$rc" -eq 143 ] && [ -n "${SLURM_JOB_ID:-}" ]; then
    echo "sedpack: stopped before the time limit (exit $rc); requeueing job $SLURM_JOB_ID to resume it"
    scontrol requeue "$SLURM_JOB_ID" || echo "sedpack: scontrol requeue failed; submit the same job again to resume"
  fi
  return "$rc"
}
