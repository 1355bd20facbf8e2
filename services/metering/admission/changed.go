package admission

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// The accounts whose usage alerts need a look. The metering service's
// billing tick checks usage alert milestones only for the accounts in one
// sorted set, so an idle platform costs it nothing per account:
//
//   - the admission script adds the account whenever it counts live usage,
//     and Reconcile when it adds journalled live usage, in the same script
//     (ZINCRBY: the score is how many changes, a version);
//   - the metering service adds it when a plan, billing limit or payment
//     standing changes (MarkChanged): a lowered cap or quota can reach a
//     milestone without any new usage;
//   - a checker reads members with their versions (Changed) and, once the
//     check succeeded, removes a member only if its version is still the one
//     it read (Checked): a change that arrived during the check keeps it for
//     the next tick, so none is lost, and a checker that died removes nothing.
//
// The set is one key for every account, outside the accounts' hash tags:
// on Redis Cluster it sits in another slot than the admission script's keys,
// so the mark is not made inside the script but sent as its own command in
// the same pipeline, after the script (runMarked): one round trip still, and
// legal on a cluster. Because of that a metered live request marks its
// account whether or not the script admitted it (a refusal costs the account
// one more check, never a missed one). On a single Redis the pipeline runs
// in order, so the mark lands after the usage it announces; on a cluster the
// two may land on different nodes in either order, and a check that read the
// mark in between could miss that one request's usage until the account's
// next request marks it again. docs/billing.md ("What the billing tick
// costs") has the reasons.
//
// A mark of an account the checker's store does not have is an orphan: it
// comes from another deployment on the same Redis (test stacks on a shared
// server), which checks its own marks within its tick, so removing it at
// once could take it from that deployment before it looked. Orphan records
// when an orphan was first seen at its version, in a hash beside the set,
// and removes it once it has sat unchanged for a while, whichever checker
// sees it then: no live deployment leaves its marks that long, and junk from
// short-lived stacks does not pile up.

// DefaultChangedKey is the sorted set's key; the orphans' hash is the same
// key with ":orphans" appended (one hash tag: one Cluster slot).
const DefaultChangedKey = "ll:{alerts}:changed"

var checkedScript = redis.NewScript(`
local v = redis.call('ZSCORE', KEYS[1], ARGV[1])
if v and tonumber(v) == tonumber(ARGV[2]) then
  redis.call('HDEL', KEYS[2], ARGV[1])
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0`)

// orphanScript: KEYS[1] the set, KEYS[2] the orphans' hash {account:
// "version:first seen ms"}; ARGV 1 account, 2 version, 3 now ms, 4 after ms.
var orphanScript = redis.NewScript(`
local v = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not v or tonumber(v) ~= tonumber(ARGV[2]) then
  return 0
end
local rec = redis.call('HGET', KEYS[2], ARGV[1])
if rec then
  local sep = string.find(rec, ':', 1, true)
  if sep and tonumber(string.sub(rec, 1, sep - 1)) == tonumber(ARGV[2]) then
    if tonumber(ARGV[3]) - tonumber(string.sub(rec, sep + 1)) >= tonumber(ARGV[4]) then
      redis.call('HDEL', KEYS[2], ARGV[1])
      return redis.call('ZREM', KEYS[1], ARGV[1])
    end
    return 0
  end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[3])
return 0`)

func (m *Controller) changedKey() string {
	if m.ChangedKey == "" {
		return DefaultChangedKey
	}
	return m.ChangedKey
}

func (m *Controller) orphansKey() string { return m.changedKey() + ":orphans" }

// runMarked runs script s on keys and args and, when member is not empty,
// bumps member's mark in the changed set in the same round trip, after the
// script, as a command of its own (see above). When Redis does not hold the
// script yet (NOSCRIPT: it did not run; the first call after a restart), the
// pair is sent again with the whole script, so the mark again follows the
// script: that account's version then moves by two, which a checker reads as
// any other change.
func (m *Controller) runMarked(ctx context.Context, s *redis.Script, member string, keys []string, args ...any) *redis.Cmd {
	if member == "" {
		return s.Run(ctx, m.rdb, keys, args...)
	}
	send := func(run func(redis.Pipeliner) *redis.Cmd) *redis.Cmd {
		pipe := m.rdb.Pipeline()
		cmd := run(pipe)
		pipe.ZIncrBy(ctx, m.changedKey(), 1, member)
		_, _ = pipe.Exec(ctx) // each command carries its own error
		return cmd
	}
	cmd := send(func(p redis.Pipeliner) *redis.Cmd { return s.EvalSha(ctx, p, keys, args...) })
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		cmd = send(func(p redis.Pipeliner) *redis.Cmd { return s.Eval(ctx, p, keys, args...) })
	}
	return cmd
}

// Changed is one account whose usage alerts need a look (quota.Changed).
type Changed = quota.Changed

// changedMember is what the scripts mark: the account, for live metered
// usage; nothing for the test pool, which no alert follows.
func changedMember(r Request) string {
	if r.Test || !r.Metered {
		return ""
	}
	return r.AccountID
}

// MarkChanged adds the account to the set (or bumps its version).
func (m *Controller) MarkChanged(ctx context.Context, acct string) error {
	if err := m.rdb.ZIncrBy(ctx, m.changedKey(), 1, acct).Err(); err != nil {
		return fmt.Errorf("admission: mark changed: %w", err)
	}
	return nil
}

// Changed returns one page of the set from cursor (0: the first), about
// count members, and the cursor of the next page (0: none). A member may
// come twice in one walk (ZSCAN's rule); Checked makes that harmless.
func (m *Controller) Changed(ctx context.Context, cursor uint64, count int64) ([]Changed, uint64, error) {
	kv, next, err := m.rdb.ZScan(ctx, m.changedKey(), cursor, "", count).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("admission: changed accounts: %w", err)
	}
	out := make([]Changed, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		v, err := strconv.ParseFloat(kv[i+1], 64)
		if err != nil {
			return nil, 0, fmt.Errorf("admission: changed accounts: score %q: %w", kv[i+1], err)
		}
		out = append(out, Changed{AccountID: kv[i], Version: v})
	}
	return out, next, nil
}

// Checked removes c's account from the set if its version is still
// c.Version, and reports whether it did: a newer change keeps it.
func (m *Controller) Checked(ctx context.Context, c Changed) (bool, error) {
	n, err := checkedScript.Run(ctx, m.rdb, []string{m.changedKey(), m.orphansKey()}, c.AccountID,
		strconv.FormatFloat(c.Version, 'f', -1, 64)).Int64()
	if err != nil {
		return false, fmt.Errorf("admission: checked: %w", err)
	}
	return n == 1, nil
}

// Orphan handles c as a mark of an account the caller's store does not
// have: it records when that mark was first seen at c.Version (now, wall
// time: it is compared across processes) and removes it, reporting true,
// once it has been seen unchanged for after.
func (m *Controller) Orphan(ctx context.Context, c Changed, now time.Time, after time.Duration) (bool, error) {
	n, err := orphanScript.Run(ctx, m.rdb, []string{m.changedKey(), m.orphansKey()}, c.AccountID,
		strconv.FormatFloat(c.Version, 'f', -1, 64), now.UnixMilli(), after.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("admission: orphan: %w", err)
	}
	return n == 1, nil
}

// DropChanged deletes the set and its orphans' hash (tests that use a key
// of their own clean up with it).
func (m *Controller) DropChanged(ctx context.Context) error {
	if err := m.rdb.Del(ctx, m.changedKey(), m.orphansKey()).Err(); err != nil {
		return fmt.Errorf("admission: drop changed: %w", err)
	}
	return nil
}
