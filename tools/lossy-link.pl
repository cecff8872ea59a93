#!/usr/bin/perl
# A network link with delay and loss in user space, for tools/test-hosts.sh where the kernel has
# no tc netem: relays Ethernet frames both ways between two TAP devices, each in a network
# namespace of its own (ip netns), holding every frame DELAY_MS milliseconds and dropping
# LOSS_PERCENT of them at random, as `tc qdisc add ... netem delay DELAY_MS loss LOSS_PERCENT%`
# on both ends of the link would. Needs root, /dev/net/tun and the TAP devices made beforehand
# (`ip -n NS tuntap add dev TAP mode tap`). Runs until killed.
# Usage: tools/lossy-link.pl NS_A TAP_A NS_B TAP_B DELAY_MS LOSS_PERCENT [SEED]
use strict;
use warnings;
use Fcntl qw(O_RDWR);
use POSIX ();

die "usage: lossy-link.pl NS_A TAP_A NS_B TAP_B DELAY_MS LOSS_PERCENT [SEED]\n" unless @ARGV >= 6;
my ($nsA, $tapA, $nsB, $tapB, $delayMs, $lossPercent, $seed) = @ARGV;
srand(defined $seed ? $seed : 1);

# The system calls' numbers (setns, clock_gettime), and the constants of <linux/if_tun.h>,
# <sched.h> and <time.h>: perl-base alone, without Time::HiRes, which Debian ships apart.
my %calls = (x86_64 => [308, 228], aarch64 => [268, 113]);
my $numbers = $calls{(POSIX::uname())[4]} or die "lossy-link: no system call numbers for this machine\n";
my ($setns, $clockGettime) = @$numbers;
use constant { CLONE_NEWNET => 0x40000000, TUNSETIFF => 0x400454ca, IFF_TAP => 0x0002, IFF_NO_PI => 0x1000 };
use constant CLOCK_MONOTONIC => 1;

# Seconds of the monotonic clock.
sub now {
  my $timespec = "\0" x 16;
  syscall($clockGettime, CLOCK_MONOTONIC, $timespec) == 0 or die "lossy-link: clock_gettime: $!\n";
  my ($seconds, $nanoseconds) = unpack('q q', $timespec);
  return $seconds + $nanoseconds / 1e9;
}

# The TAP device NAME of namespace NS, opened from inside it; the process stays in NS after.
sub openTap {
  my ($ns, $name) = @_;
  open(my $space, '<', "/run/netns/$ns") or die "lossy-link: /run/netns/$ns: $!\n";
  syscall($setns, fileno($space), CLONE_NEWNET) == 0 or die "lossy-link: entering $ns: $!\n";
  sysopen(my $tap, '/dev/net/tun', O_RDWR) or die "lossy-link: /dev/net/tun: $!\n";
  ioctl($tap, TUNSETIFF, pack('a16 s', $name, IFF_TAP | IFF_NO_PI)) or die "lossy-link: $name in $ns: $!\n";
  return $tap;
}

my @taps = (openTap($nsA, $tapA), openTap($nsB, $tapB));
my $delay = $delayMs / 1000;
my @queue;  # [due, index of the TAP to write, frame], due in order: one delay for all
my $readers = '';
vec($readers, fileno($_), 1) = 1 for @taps;
while (1) {
  my $timeout = @queue ? $queue[0][0] - now() : undef;
  $timeout = 0 if defined $timeout && $timeout < 0;
  my $ready = select(my $out = $readers, undef, undef, $timeout);
  next if $ready < 0 && $!{EINTR};
  die "lossy-link: select: $!\n" if $ready < 0;
  my $now = now();
  for my $i (0, 1) {
    next unless vec($out, fileno($taps[$i]), 1);
    # A TAP device gives one frame a read.
    my $n = sysread($taps[$i], my $frame, 65536);
    next unless $n;
    push @queue, [$now + $delay, 1 - $i, $frame] if rand(100) >= $lossPercent;
  }
  $now = now();
  while (@queue && $queue[0][0] <= $now) {
    my ($due, $to, $frame) = @{shift @queue};
    # A device that is down takes nothing: the frame is lost, as on a cable pulled out.
    syswrite($taps[$to], $frame);
  }
}
