#!/usr/bin/env bash
# The project's source rules, checked by machine (curl's checksrc, in our
# terms); run by scripts/test.sh, so CI fails on a breach. For every C file
# git tracks (or is about to: untracked, not ignored):
#   - no banned function: strcpy strcat sprintf vsprintf gets atoi atol strtok
#     (comments and string literals are not looked at);
#   - the file opens with a comment that says what the module is;
#   - outside tests/, no more than 800 lines.
# And rules over the repository (scripts/check-src-paths.pl,
# scripts/check-src-tests-only.pl and scripts/check-threads.pl say exactly
# what they take):
#   - every repository path cited in a C comment, in docs/ or in README.md
#     exists (the path rule; given FILEs: in those);
#   - no function only tests/ and bench/ call is declared in a public header:
#     it goes in the module's *_testing.h (the test-only rule; run without
#     FILEs only);
#   - docs/architecture.md's thread table names exactly the threads the
#     code names (scripts/check-threads.pl; run without FILEs only).
# Each problem is printed as FILE:LINE: and the rule.
# Usage: scripts/check-src.sh [FILE...]     (default: every C file)
set -euo pipefail
cd "$(dirname "$0")/.."

limit=800
if [ $# -gt 0 ]; then
  files=("$@")
  mapfile -t cfiles < <(printf '%s\n' "$@" | grep -E '\.[ch]$' || true)
else
  mapfile -t cfiles < <(git ls-files --cached --others --exclude-standard -- '*.c' '*.h' |
                        while read -r f; do [ -f "$f" ] && echo "$f"; done)
  mapfile -t docs < <(git ls-files --cached --others --exclude-standard -- 'docs/*.md' README.md |
                      while read -r f; do [ -f "$f" ] && echo "$f"; done)
  files=("${cfiles[@]}" "${docs[@]}")
fi
status=0

[ ${#cfiles[@]} -eq 0 ] || perl -e '
  use strict; use warnings;
  my ($limit, @files) = @ARGV;
  my $banned = qr/\b(strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|strtok)\s*\(/;
  my $bad = 0;
  for my $f (@files) {
    open(my $fh, "<", $f) or do { print "$f: cannot read: $!\n"; $bad++; next };
    local $/; my $text = <$fh>; close $fh;
    if ($text !~ m{\A\s*/\*}) { print "$f:1: the file must open with a comment saying what the module is\n"; $bad++ }
    my $code = $text;
    $code =~ s{/\*.*?\*/}{ my $c = $&; $c =~ tr/\n//cd; $c }gse;  # keep line numbers
    $code =~ s{//[^\n]*}{}g;
    $code =~ s{"(?:\\.|[^"\\\n])*"}{""}g;
    $code =~ s{\x27(?:\\.|[^\x27\\\n])*\x27}{0}g;
    my $line = 0;
    for my $l (split /\n/, $code, -1) {
      $line++;
      if ($l =~ $banned) { print "$f:$line: banned function $1() (see docs/contributing.md)\n"; $bad++ }
    }
    next if $f =~ m{^tests/};
    my $lines = ($text =~ tr/\n//);
    if ($lines > $limit) {
      print "$f: $lines lines; the limit is $limit (split it along its seams)\n";
      $bad++;
    }
  }
  print $bad ? "check-src: $bad problem(s)\n" : "check-src: " . scalar(@files) . " files clean\n";
  exit($bad ? 1 : 0);
' "$limit" "${cfiles[@]}" || status=1
scripts/check-src-paths.pl "${files[@]}" || status=1
if [ $# -eq 0 ]; then
  scripts/check-src-tests-only.pl || status=1
  scripts/check-threads.pl || status=1
fi
exit $status
