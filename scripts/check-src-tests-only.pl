#!/usr/bin/env perl
# scripts/check-src-tests-only.pl - two rules of scripts/check-src.sh: no
# function or variable that only tests use is declared in a public header,
# and no header declares a function that is defined nowhere.
#
# Public headers: kube/ROOM/NAME.h, scheduler/**.h and apiserver/**.h,
# except *_testing.h. A function declared there must be named somewhere
# outside tests/ and bench/ other than in a declaration or its definition
# (a call, its address taken, a macro body); otherwise its declaration
# goes in the module's NAME_testing.h, or the function goes. The same holds
# for an extern variable (a codec, say) declared in a public header.
# Every function any header of the project declares (*_testing.h and
# *_int.h included) is defined somewhere: NAME(...) { in a .c or .h file.
# Usage: scripts/check-src-tests-only.pl   (run from the repository root)
# Prints HEADER:LINE: test-only rule: ... for each; exits 1 when any.
use strict; use warnings;
my @tracked = grep { -f } map { chomp; $_ } `git ls-files --cached --others --exclude-standard -- "*.c" "*.h"`;
my %code;
sub strip {                     # comments and literals blanked, lines kept
  my ($t) = @_;
  my $out = "";
  while ($t =~ m{\G(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[^/"']+|.)}gsc) {
    my $x = $1;
    if ($x =~ m{^(?:/[*/]|["'])}) { (my $k = $x) =~ tr/\n/ /c; $out .= $k } else { $out .= $x }
  }
  return $out;
}
for my $f (@tracked) {
  open(my $fh, "<", $f) or next; local $/; $code{$f} = strip(<$fh>); close $fh;
}
# Declarations: name, header, line.
my (@decls, @all_decls);
for my $f (grep { m{^(kube/[^/]+/[^/]+|scheduler/.+|apiserver/.+)\.h$} } @tracked) {
  my $public = $f !~ /_testing\.h$/;
  my $c = $code{$f};
  $c =~ s/^[ \t]*#(?:[^\n]*\\\n)*[^\n]*//mg;     # preprocessor lines (macros) aside
  my $depth = 0; my $stmt = ""; my $stmt_line = 1; my $line = 1;
  for my $ch (split //, $c) {
    if ($ch eq "\n") { $line++ }
    if ($ch eq "{") { $depth++; $stmt = ""; next }
    if ($ch eq "}") { $depth--; $stmt = ""; next }
    next if $depth;
    $stmt_line = $line if $stmt =~ /^\s*$/ && $ch =~ /\S/;
    if ($ch eq ";") {
      if ($stmt !~ /\b(?:typedef|static)\b/ && $stmt =~ /\b([A-Za-z_]\w*)\s*\((?![^()]*\)\s*\()/ ) {
        my $name = $1;
        if ($stmt =~ /^\s*[A-Za-z_][\w\s\*]*?\b\Q$name\E\s*\(/) {
          push @decls, [$name, $f, $stmt_line] if $public;
          push @all_decls, [$name, $f, $stmt_line];
        }
      } elsif ($public && $stmt =~ /^\s*extern\b[\w\s\*]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?$/) {
        push @decls, [$1, $f, $stmt_line, "var"];
      }
      $stmt = ""; next;
    }
    $stmt .= $ch;
  }
}
# Uses outside tests/ and bench/: any mention in a .c or .h file that is not
# a declaration or definition at file scope (name followed by "(" there).
my %used;
for my $f (grep { !m{^(?:tests|bench)/} } @tracked) {
  my $c = $code{$f};
  my $depth = 0;
  # Macro bodies use what they name.
  while ($c =~ m{^[ \t]*#[ \t]*define((?:[^\n]*\\\n)*[^\n]*)}mg) { $used{$_} = 1 for $1 =~ /\b([A-Za-z_]\w*)\b/g }
  $c =~ s/^[ \t]*#(?:[^\n]*\\\n)*[^\n]*//mg;
  while ($c =~ m{([{}])|\b([A-Za-z_]\w*)\b(\s*\()?}g) {
    if (defined $1) { $depth += $1 eq "{" ? 1 : -1; next }
    $used{$2} = 1 if $depth > 0 || !defined $3;
  }
}
# A variable's uses: mentions outside tests/ and bench/ other than its
# extern declarations and its definition (NAME = ...).
my %var_used;
for my $f (grep { !m{^(?:tests|bench)/} } @tracked) {
  (my $c = $code{$f}) =~ s/^[ \t]*extern\b[^;]*;//mg;
  $var_used{$1} = 1 while $c =~ m{\b([A-Za-z_]\w*)\b(?!\s*=[^=])}g;
}
my $bad = 0;
for my $d (sort { $a->[1] cmp $b->[1] || $a->[2] <=> $b->[2] } @decls) {
  my ($name, $f, $line, $var) = @$d;
  next if $var ? $var_used{$name} : $used{$name};
  print "$f:$line: test-only rule: ", $var ? "$name is used" : "$name() is called",
        " only by tests/ or bench/ (declare it in a *_testing.h, or delete it)\n";
  $bad++;
}
# Definitions: NAME ( params ) { at file scope, in any C file.
my %defined;
for my $f (@tracked) {
  my $c = $code{$f};
  $defined{$1} = 1 while $c =~ m{\b([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*(?:__attribute__\s*\(\([^;{}]*\)\)\s*)?\{}g;
}
# Functions a macro defines by pasting its arguments (KUBE_KIND_DEFINE's
# kube_##NAME##_from): each invocation's pasted names count as defined.
my %pasting;
for my $f (@tracked) {
  while ($code{$f} =~ m{^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)}mg) {
    my ($m, $params, $body) = ($1, $2, $3);
    my @p = map { s/^\s+|\s+$//gr } split /,/, $params;
    my @pasted = $body =~ /\b(\w+(?:\s*##\s*\w+)+)\s*\(/g;
    $pasting{$m} = [\@p, \@pasted] if @pasted;
  }
}
for my $f (@tracked) {
  for my $m (keys %pasting) {
    my ($p, $pasted) = @{$pasting{$m}};
    while ($code{$f} =~ m{\b\Q$m\E\s*\(([^()]*)\)}g) {
      my @a = map { s/^\s+|\s+$//gr } split /,/, $1;
      for my $pat (@$pasted) {
        my $name = join "", map { my $t = $_; my ($i) = grep { $p->[$_] eq $t } 0..$#$p; defined $i ? ($a[$i] // "") : $t } split /\s*##\s*/, $pat;
        $defined{$name} = 1;
      }
    }
  }
}
my %seen;
for my $d (sort { $a->[1] cmp $b->[1] || $a->[2] <=> $b->[2] } @all_decls) {
  my ($name, $f, $line) = @$d;
  next if $defined{$name} || $seen{$name}++;
  print "$f:$line: test-only rule: $name() is declared but defined nowhere (delete the declaration)\n";
  $bad++;
}
print $bad ? "test-only rule: $bad problem(s)\n" : "test-only rule: clean\n";
exit($bad ? 1 : 0);
