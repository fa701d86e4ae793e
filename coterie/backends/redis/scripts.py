"""The server-side scripts of the Redis mailbox (Lua, run atomically by Redis).

Each takes the stream as ``KEYS[1]`` and the consumer group as ``ARGV[1]``;
every key a script touches is passed in ``KEYS`` (so a cluster could route it).
A message is the field ``m`` of its stream entry (the message's JSON).
"""

from __future__ import annotations

#: Acknowledge entries and delete the acknowledged ones: the stream holds
#: exactly the unacknowledged messages, so nothing ever needs ``MAXLEN`` (which
#: would drop unacknowledged entries). An entry not in the group's pending list
#: (acknowledged already) is left alone. Returns how many were acknowledged.
ACK = """
local n = 0
for i = 2, #ARGV do
  if redis.call('XACK', KEYS[1], ARGV[1], ARGV[i]) == 1 then
    redis.call('XDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n
"""

#: This consumer's pending entries from ARGV[3] (an XPENDING start: ``-`` or
#: ``(ID``), at most ARGV[4], each as {id, delivery count, message}; entries
#: deleted from the stream meanwhile are acknowledged away. Reading them with
#: XRANGE leaves their delivery counts as they are (XREADGROUP with an id
#: would add one).
MINE = """
local rows = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], '+', tonumber(ARGV[4]), ARGV[2])
local out = {}
for _, row in ipairs(rows) do
  local e = redis.call('XRANGE', KEYS[1], row[1], row[1])
  if #e == 0 then
    redis.call('XACK', KEYS[1], ARGV[1], row[1])
  else
    local payload = ''
    local fv = e[1][2]
    for i = 1, #fv, 2 do
      if fv[i] == 'm' then payload = fv[i + 1] end
    end
    table.insert(out, {row[1], row[4], payload})
  end
end
return {#rows, out}
"""

#: Move entry ARGV[2] to the dead-letter stream KEYS[2] (with its delivery
#: count ARGV[3] and the reason ARGV[4]), then acknowledge and delete it, all
#: at once. Returns the dead-letter entry's id, or false if the entry was
#: acknowledged meanwhile.
DEAD_LETTER = """
local e = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
if #e == 0 or redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  return false
end
local payload = ''
local fv = e[1][2]
for i = 1, #fv, 2 do
  if fv[i] == 'm' then payload = fv[i + 1] end
end
local dead = redis.call('XADD', KEYS[2], '*', 'm', payload, 'id', ARGV[2],
                        'deliveries', ARGV[3], 'reason', ARGV[4])
redis.call('XDEL', KEYS[1], ARGV[2])
return dead
"""
