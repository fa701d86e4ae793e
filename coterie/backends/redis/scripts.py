"""The server-side scripts of the Redis mailbox and board (Lua, run atomically by Redis).

Every key a script touches is passed in ``KEYS`` (so a cluster could route it).
The mailbox's take the stream as ``KEYS[1]`` and the consumer group as
``ARGV[1]``; a message is the field ``m`` of its stream entry (the message's
JSON). The board's one, ``APPEND``, is explained in
:mod:`coterie.backends.redis.board`.
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

#: Open a mailbox for this consumer, all in one round trip: its group made (with
#: the stream) unless it is there, its name added to the run's registry
#: (KEYS[2]), every message another consumer holds in flight idle for ARGV[6] ms
#: taken over (``XAUTOCLAIM``, which counts a delivery), and with ARGV[6] = 0 (every
#: one taken: the others are gone) the other consumers without pending entries
#: deleted. Then :data:`MINE`'s first page (ARGV[3] ``-``, ARGV[4] its size), as
#: MINE returns it. ARGV[5]: the mailbox's name.
OPEN = (
    """
local made = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
if type(made) == 'table' and made.err and not string.find(made.err, 'BUSYGROUP') then
  return made
end
redis.call('SADD', KEYS[2], ARGV[5])
local start = '0-0'
repeat
  start = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[6], start,
                     'COUNT', ARGV[4])[1]
until start == '0-0'
if tonumber(ARGV[6]) == 0 then
  for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
    local name, pending
    for i = 1, #consumer, 2 do
      if consumer[i] == 'name' then name = consumer[i + 1] end
      if consumer[i] == 'pending' then pending = consumer[i + 1] end
    end
    if name and name ~= ARGV[2] and pending == 0 then
      redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
    end
  end
end
"""
    + MINE
)

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

#: The board's append (coterie.backends.redis.board). KEYS: the log stream,
#: the turn, the wake-up list, the "someone waits" mark. ARGV: how many
#: records the writer has read, BATCH, its token, TURN_MS, then the records
#: to append. Returns:
#:
#: * ``{1}``: appended (or, with no records, confirmed: the writer had read
#:   the whole log). The turn, if it was the writer's, is given back, and a
#:   waiting writer, if any, is woken (one token on the wake-up list);
#: * ``{0, entries}``: the log moved on: up to BATCH of the records after
#:   ARGV[1]. The turn is now the writer's, unless the first of them is its
#:   own first record (a retried call whose first reply was lost);
#: * ``{2}``: another writer has the turn: wait on the wake-up list;
#: * ``{3}``: the log is shorter than what the writer read (it was deleted).
#:
#: Entry ids are ``0-<n>``: the n-th record is found without counting, and no
#: id is ever written twice.
APPEND = """
local log, turn_key, wake, waiting = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local read, me, ttl = tonumber(ARGV[1]), ARGV[3], ARGV[4]
local turn = redis.call('GET', turn_key)
if turn and turn ~= me then
  redis.call('SET', waiting, 1, 'PX', ttl)
  return {2}
end
local have = redis.call('XLEN', log)
if have < read then
  return {3}
end
if have > read then
  local missed = redis.call('XRANGE', log, '(0-' .. read, '+', 'COUNT', ARGV[2])
  if #ARGV < 5 or missed[1][2][2] ~= ARGV[5] then
    redis.call('SET', turn_key, me, 'PX', ttl)
  end
  return {0, missed}
end
for i = 5, #ARGV do
  redis.call('XADD', log, '0-' .. (read + i - 4), 'r', ARGV[i])
end
if turn then
  redis.call('DEL', turn_key)
end
if turn or redis.call('EXISTS', waiting) == 1 then
  redis.call('DEL', wake)
  redis.call('RPUSH', wake, 1)
end
return {1}
"""
