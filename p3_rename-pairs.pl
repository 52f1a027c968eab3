#!/usr/bin/perl
# rename-pairs.pl PAIRS FILE...: renames each whole identifier OLD to NEW
# (PAIRS: a file of "OLD NEW" lines), in place, and moves by the change of
# length the continuation lines aligned after an open '(' that a rename on
# its line shifted, and keeps a macro's '\' column where blanks allow.
use strict;
use warnings;
my ($pairs, @files) = @ARGV;
open(my $p, '<', $pairs) or die "$pairs: $!";
my %to = map { /^(\S+)\s+(\S+)/ ? ($1, $2) : () } <$p>;
close $p;
my $alt = join '|', map { quotemeta } sort { length($b) <=> length($a) } keys %to;
my $re = qr/\b($alt)\b/;
for my $file (@files) {
    open(my $in, '<', $file) or die "$file: $!";
    my @lines = <$in>;
    close $in;
    my ($depth, $old_col, $new_col) = (0, -1, -1);
    for my $line (@lines) {
        my $before = length $line;
        if ($depth > 0) {
            $line =~ s/^ {$old_col}(?=\S)/' ' x $new_col/e;
            $depth += ($line =~ tr/(//) - ($line =~ tr/)//);
        } else {
            my @open;
            while ($line =~ /([()])/g) {
                if ($1 eq '(') { push @open, $-[1] } elsif (@open) { pop @open }
            }
            if (@open) {
                my $col = $open[-1];
                my $shift = 0;
                my $head = substr($line, 0, $col);
                while ($head =~ /$re/g) { $shift += length($to{$1}) - length($1) }
                ($depth, $old_col, $new_col) = (scalar @open, $col + 1, $col + 1 + $shift) if $shift;
            }
        }
        $line =~ s/$re/$to{$1}/g;
        # A macro's line continuation keeps its column where blanks allow.
        my $grew = length($line) - $before;
        $line =~ s/( +)\\\n$/' ' x (length($1) - $grew > 0 ? length($1) - $grew : 1) . "\\\n"/e
            if $grew > 0;
    }
    open(my $out, '>', $file) or die "$file: $!";
    print $out @lines;
    close $out;
}

