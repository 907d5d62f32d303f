#!/usr/bin/env bash
# The project's source rules, checked by machine (curl's checksrc, in our
# terms); run by scripts/test.sh, so CI fails on a breach. For every C file
# git tracks (or is about to: untracked, not ignored):
#   - no banned function: strcpy strcat sprintf vsprintf gets atoi atol strtok
#     (comments and string literals are not looked at);
#   - the file opens with a comment that says what the module is;
#   - outside tests/, no more than 800 lines.
# Usage: scripts/check-src.sh [FILE...]     (default: every C file)
set -euo pipefail
cd "$(dirname "$0")/.."

limit=800
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.c' '*.h' |
                       while read -r f; do [ -f "$f" ] && echo "$f"; done)
fi

perl -e '
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
' "$limit" "${files[@]}"
