#!/usr/bin/env perl
# scripts/check-threads.pl - a rule of scripts/check-src.sh: the thread
# table of docs/architecture.md ("## Threads", first column) names exactly
# the threads the daemons' code names. A name in code is a string literal
# of the form word-word given to pthread_setname_np(), to
# kube_http_loop_new() or to a thread_name field (the secure port's); the
# code is every .c file outside tests/ and bench/.
# Usage: scripts/check-threads.pl   (run from the repository root)
# Prints what differs; exits 1 when anything does.
use strict; use warnings;
my $doc = "docs/architecture.md";
my (%code, %table);
for my $f (grep { -f && !m{^(?:tests|bench)/} } split /\n/, `git ls-files --cached --others --exclude-standard -- "*.c"`) {
  open(my $fh, "<", $f) or next; local $/; my $t = <$fh>; close $fh;
  $t =~ s{/\*.*?\*/}{ }gs;
  while ($t =~ m{(?:pthread_setname_np\s*\([^;]*?|kube_http_loop_new\s*\(\s*|thread_name\s*(?:=|\?)[^;]*?)"([a-z]+-[a-z-]+)"}g) {
    $code{$1} //= $f;
  }
}
open(my $fh, "<", $doc) or die "check-threads: cannot read $doc: $!\n";
my $in = 0;
while (my $l = <$fh>) {
  if ($l =~ /^## /) { $in = $l =~ /^## Threads\b/; next }
  $table{$1} = 1 if $in && $l =~ /^\|\s*`([^`]+)`\s*\|/;
}
close $fh;
my $bad = 0;
for my $n (sort keys %code) {
  next if $table{$n};
  print "$code{$n}: thread rule: thread \"$n\" is missing from the thread table of $doc\n";
  $bad++;
}
for my $n (sort keys %table) {
  next if $code{$n};
  print "$doc: thread rule: the thread table names \"$n\", which no code starts\n";
  $bad++;
}
print $bad ? "thread rule: $bad problem(s)\n" : "thread rule: clean (" . scalar(keys %code) . " threads)\n";
exit($bad ? 1 : 0);
