# Sourced by scripts/compare-builds and scripts/compare-plugins: the CPU their benchmarks run
# on. Sets `cpu` (a CPU number, or "all"), `pin` (the command prefix: taskset -c CPU, or
# nothing) and `where` (for the output's first line).
#   LIEMBS_COMPARE_CPU=N     the CPU (default: the last CPU this process may use)
#   LIEMBS_COMPARE_CPU=all   not pinned
# Why pinned: on the project's 2-vCPU virtual machine one vCPU ran about 25 % slower than the
# other for minutes at a time (docs/studies.md, "Cost"); unpinned, a benchmark stays on the CPU
# it starts on, so the runs of one side can land on the slow CPU and the other's on the fast one.

# The CPUs this process may use (Cpus_allowed_list, e.g. "0-1" or "0,2-3"), one per line.
allowed_cpus() {
  local range
  for range in $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' ' '); do
    seq "${range%-*}" "${range#*-}"
  done
}
cpu=${LIEMBS_COMPARE_CPU:-$(allowed_cpus | tail -n 1)}
pin=()
if [[ $cpu != all ]]; then
  allowed_cpus | grep -qx -- "$cpu" || {
    echo "error: LIEMBS_COMPARE_CPU=$cpu is not a CPU this process may use ($(allowed_cpus | paste -sd, -)), nor 'all'" >&2
    exit 2
  }
  command -v taskset >/dev/null || { echo "error: taskset not found (Debian: apt-get install util-linux)" >&2; exit 1; }
  pin=(taskset -c "$cpu")
fi
where=$([[ $cpu == all ]] && echo "not pinned" || echo "pinned to CPU $cpu")
