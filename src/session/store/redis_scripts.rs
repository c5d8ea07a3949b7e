//! The Lua scripts that make the Redis store's leases and fenced writes atomic: each one
//! checks the lease before it writes, inside Redis.

use redis::Script;

/// Takes a lease if it is free: returns the new fencing token, or the holder. ARGV[1]
/// ends with a nonce of this attempt, so a retry of an attempt that did take the lease
/// (its reply lost) finds it its own.
const ACQUIRE: &str = r"
local mine = ARGV[1] .. '|'
local current = redis.call('GET', KEYS[1])
if current and string.sub(current, 1, #mine) == mine then
  return {1, string.sub(current, #mine + 1)}
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], mine .. token, 'PX', ARGV[2])
  return {1, tostring(token)}
end
return {0, current or ''}
";

/// Takes over exactly the lease value ARGV[1] (a dead process's): a new token, the new
/// owner ARGV[2], the TTL ARGV[3]. Nil if the lease changed meanwhile.
const STEAL: &str = r"
local mine = ARGV[2] .. '|'
local current = redis.call('GET', KEYS[1])
if current and string.sub(current, 1, #mine) == mine then
  return string.sub(current, #mine + 1)
end
if current == ARGV[1] then
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[2] .. '|' .. token, 'PX', ARGV[3])
  return tostring(token)
end
return false
";

/// Renews a lease this node holds (0: it is no longer ours).
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Lets go of a lease this node holds.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// Appends a record if the lease is still ours (the fence), once: a retried append whose
/// sequence number is already in is not written again. KEYS: lease, stream, meta. ARGV:
/// lease value, line, 1 if a message, the record's sequence number.
const APPEND: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE lost')
end
local last = tonumber(redis.call('HGET', KEYS[3], 'seq') or '0')
local seq = tonumber(ARGV[4])
if seq == last then return 0 end
if seq ~= last + 1 then return redis.error_reply('SEQ expected ' .. (last + 1)) end
redis.call('XADD', KEYS[2], '*', 'r', ARGV[2])
redis.call('HSET', KEYS[3], 'seq', ARGV[4])
if ARGV[3] == '1' then redis.call('HINCRBY', KEYS[3], 'messages', 1) end
return 1
";

/// Deletes a session if the lease is still ours. KEYS: lease, stream, meta, fence, list,
/// cwd list. ARGV: lease value, id.
const DELETE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE lost')
end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[1])
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('ZREM', KEYS[6], ARGV[2])
return 1
";

/// Writes metadata fields if the lease is still ours (KEYS: lease, meta, list, cwd list;
/// ARGV: lease value, score, id, then field/value pairs).
const META: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE lost')
end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[3])
return 1
";

pub(super) struct Scripts {
    pub(super) acquire: Script,
    pub(super) renew: Script,
    pub(super) release: Script,
    pub(super) append: Script,
    pub(super) steal: Script,
    pub(super) delete: Script,
    pub(super) meta: Script,
}

impl Scripts {
    pub(super) fn new() -> Scripts {
        Scripts {
            acquire: Script::new(ACQUIRE),
            renew: Script::new(RENEW),
            release: Script::new(RELEASE),
            append: Script::new(APPEND),
            steal: Script::new(STEAL),
            delete: Script::new(DELETE),
            meta: Script::new(META),
        }
    }
}
