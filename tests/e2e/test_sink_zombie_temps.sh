#!/usr/bin/env bash
# A recorder SIGKILLed and not yet reaped by its parent (a zombie: kill(pid, 0) still
# succeeds) is dead: when another open recovers its session, the temp files it left go too.
# Recovery is the only time anything looks at them (the session then leaves "running"), so a
# temp kept because the pid looked alive was never removed (seen in tests/chaos.sh: "no temp
# file left", session.json.tmp.<pid> of a recorder killed at its end).
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=1
K=$T/sink

# The parent (perl) forks the recorder, SIGKILLs it and, before reaping it, plants the temp
# file a write of its session.json would leave and lets `runmon sessions` recover the sink.
export K RUNMON
perl -e '
    my $pid = fork() // die;
    if (!$pid) { exec(@ARGV) or exit 127 }
    select(undef, undef, undef, 1.0);
    kill 9, $pid;
    select(undef, undef, undef, 0.3);
    $ENV{ZPID} = $pid;
    system("bash", "-c", q{
        id=$(ls "$K" | grep -E -- "-$ZPID\$")
        awk "{ sub(/^.*\\) /, \"\"); print \"state\", \$1 }" /proc/$ZPID/stat >"$K/../zstate"
        echo "{}" >"$K/$id/session.json.tmp.$ZPID"
        "$RUNMON" sessions "$K" --format json >"$K/../listing" 2>/dev/null
        ls -a "$K/$id" >"$K/../after"
    });
    waitpid($pid, 0);
' -- "$RUNMON" record -q -o "$K" -i 0.1 --flush-seconds 0.2 -- sleep 5

expect_eq "the killed recorder was a zombie when the sink was recovered" "state Z" "$(cat "$T/zstate")"
expect_eq "its session is listed interrupted" "interrupted" "$(jq -r '.sessions[0].status' "$T/listing")"
expect_eq "the temp file it left is gone" "" "$(grep '\.tmp\.' "$T/after")"
done_testing
