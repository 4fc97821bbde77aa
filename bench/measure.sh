# Sourced by the bench scripts (after their `cd` to the project root): the
# arithmetic and clock helpers every one of them times with.
#   calc EXPR    print the value of an awk expression ("$t1 - $t0")
#   median       the median of the numbers on stdin, one a line
#   now          the wall clock in seconds, to the nanosecond
#   load         "load: " and the 1, 5 and 15 minute load averages, printed
#                beside every figure (these machines are shared and noisy)
calc() { awk "BEGIN { print $1 }"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
now() { date +%s.%N; }
load() { echo "load: $(uptime | sed 's/.*load average: //')"; }
