#!/usr/bin/env perl
# scripts/check-src-paths.pl - a rule of scripts/check-src.sh: every
# repository path cited in a C comment, in docs/ or in README.md exists.
#
# A path is a word that starts with a top-level folder of the repository
# and ends in "/" (a folder: "kube/util/") or in ".ext" (a file:
# "kube/util/buf.h", "tests/unit/test_*.c", "kube/types/pin.{c,h}"), not
# preceded by "/", "." or a word character (so "pkg/scheduler/..." and
# "k8s.io/apiserver/..." are upstream's, not ours). A path without an
# extension ("kube/transport/client") names a module: some file of it
# ("kube/transport/client.c") or a folder must exist. *, ? and {a,b} are
# globs; an
# all-capital segment (NAME, ROOM) is a placeholder for any name. A path
# wrapped at the end of a comment line continues on the next. In Markdown,
# relative link targets are resolved from the page. A ":LINE" suffix is
# ignored.
# A C comment never cites an issue number ("issue #23"): it says what the
# code does. Also, in a header's comments, a project function cited as name() (a
# kube_, sched_, fw_, plugin_, apis_, kctl_ or klog_ name) must be defined
# or declared somewhere in the repository's C files.
# Usage: scripts/check-src-paths.pl FILE...   (run from the repository root)
# Prints FILE:LINE: path rule: ... for each; exits 1 when any.
use strict; use warnings;
my @files = @ARGV;
chomp(my @tracked = `git ls-files --cached --others --exclude-standard`);
my %exists; my %top;
for my $f (@tracked) {
  next unless -e $f;
  $exists{$f} = 1;
  my @p = split m{/}, $f;
  $top{$p[0]} = 1 if @p > 1;
  for my $i (1 .. $#p) { $exists{join("/", @p[0 .. $i - 1]) . "/"} = 1 }
}
my $tops = join "|", map { quotemeta } sort keys %top;
my $bad = 0;

# A cited path as a regex: *, ?, {a,b} and all-capital placeholder
# segments (NAME, ROOM) match any name.
sub path_re {
  my ($p) = @_;
  my $re = "";
  for my $seg (split m{(/)}, $p) {
    if ($seg eq "/") { $re .= "/"; next }
    if ($seg =~ /^([A-Z][A-Z0-9_]*)((?:\.[\w{},]+)?)$/ && $1 ne "README") { $seg = "*$2" }
    my $s = quotemeta $seg;
    $s =~ s/\\\*/[^\/]*/g; $s =~ s/\\\?/[^\/]/g;
    $s =~ s/\\\{([^}]*)\\\}/ "(?:" . join("|", split m{\\,}, $1) . ")" /ge;
    $re .= $s;
  }
  return qr/^$re$/;
}
sub found {
  my ($p) = @_;
  return 1 if $exists{$p} || $exists{"$p/"};
  return 0 unless $p =~ /[*?{]|(?:^|\/)[A-Z][A-Z0-9_]*(?:\.|\/|$)/;
  my $re = path_re($p);
  for my $f (keys %exists) { return 1 if $f =~ $re }
  return 0;
}
# A module cited without its extension: a file NAME.EXT or a folder.
sub module_found {
  my ($p) = @_;
  return 1 if found($p);
  my $re = path_re("$p.*");
  for my $f (keys %exists) { return 1 if $f =~ $re }
  return 0;
}
sub report {
  my ($f, $line, $p) = @_;
  print "$f:$line: path rule: \"$p\" names no file or folder of the repository\n";
  $bad++;
}
my $seg = qr{[\w.*?{},-]+};
for my $f (@files) {
  open(my $fh, "<", $f) or next;
  local $/; my $text = <$fh>; close $fh;
  my $is_c = $f =~ /\.[ch]$/;
  my $is_md = $f =~ /\.md$/;
  my @lines = split /\n/, $text, -1;
  if ($is_c) {   # keep comments only, blanking code and strings, line numbers kept
    my $out = "";
    while ($text =~ m{\G(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[^/"']+|.)}gsc) {
      my $t = $1;
      if ($t =~ m{^(/\*|//)}) { $out .= $t } else { (my $k = $t) =~ tr/\n/ /c; $out .= $k }
    }
    @lines = split /\n/, $out, -1;
  }
  for my $ln (0 .. $#lines) {
    my $l = $lines[$ln];
    if ($is_c && $l =~ /\bissues? #?\d+/i) {
      print "$f:", $ln + 1, ": path rule: a comment cites an issue number; say what the code does\n";
      $bad++;
    }
    while ($l =~ m{(?<![\w./\$~-])((?:$tops)/(?:$seg/)*$seg?)}g) {
      my $p = $1;
      my $end = pos($l);
      $p =~ s/[.,:;]+$//;
      $p =~ s/:\d+(?:-\d+)?$//;
      # A path wrapped at a line end ("scheduler/plugins/" then "registry.c")
      if ($is_c && $p =~ m{/$} && $end == length($l) && $ln < $#lines &&
          $lines[$ln + 1] =~ m{^\s*(?:\*|//|#)?\s*([\w.-]*[\w-](?:\.[a-z]{1,5}|/[\w./-]*))(?=[\s.,;:)]|$)}) {
        my $next = $1; $next =~ s/[.,:;]+$//;
        $p .= $next unless $next =~ /^\d|^e\.g|^i\.e/;
      }
      next if $p =~ /\.\.\./;
      # A path is dir/ or dir/file.ext; "kube/util/clock" names a module.
      if ($p =~ m#/$# || $p =~ m#/[^/]*[\w*}]\.[\w{},*]+$#) {
        report($f, $ln + 1, $p) unless found($p);
      } elsif ($p =~ m#/[A-Za-z_*][\w*-]*$#) {
        report($f, $ln + 1, $p) unless module_found($p);
      }
    }
    next unless $is_md;
    while ($l =~ m{\]\(([^)\s#]+)(?:#[^)]*)?\)}g) {    # markdown links, relative to the page
      my $t = $1;
      next if $t =~ m{^[a-z]+:} || $t =~ m{^/};
      (my $dir = $f) =~ s{[^/]*$}{};
      my $p = $dir . $t;
      1 while $p =~ s{(^|/)(?!\.\./)[^/]+/\.\./}{$1};
      $p =~ s{^\./}{};
      report($f, $ln + 1, $t) unless $exists{$p} || $exists{"$p/"};
    }
  }
}
# Names: every kube_/sched_/... identifier of the C files.
my %named;
for my $f (grep { /\.[ch]$/ && -f } @tracked) {
  open(my $fh, "<", $f) or next; local $/; my $t = <$fh>; close $fh;
  $t =~ s{/\*.*?\*/}{ }gs;
  $named{$1} = 1 while $t =~ /\b((?:kube|sched|fw|plugin|apis|kctl|klog)_\w+)\b/g;
}
for my $f (grep { /\.h$/ } @files) {
  open(my $fh, "<", $f) or next; local $/; my $t = <$fh>; close $fh;
  while ($t =~ m{/\*(.*?)\*/}gs) {
    my ($c, $start) = ($1, $-[0]);
    while ($c =~ /\b((?:kube|sched|fw|plugin|apis|kctl|klog)_\w+)\(\)/g) {
      next if $named{$1};
      my $line = 1 + (substr($t, 0, $start) . substr($c, 0, $-[0])) =~ tr/\n//;
      print "$f:$line: path rule: $1() is cited but declared nowhere\n";
      $bad++;
    }
  }
}
print $bad ? "path rule: $bad problem(s)\n" : "path rule: clean\n";
exit($bad ? 1 : 0);
