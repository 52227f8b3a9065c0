"""The three agents of the comparison with the AgentIdem Python SDK.

scripts/bench/python-sdk.sh runs this with the SDK importable (its src/ on
PYTHONPATH): a naive refund with retries, a keyed refund and ten distinct
writes, like testkit/measure_test.go's, each suite through the SDK's
test_agent_async with a fresh world per traced run, timed suite by suite.
It prints one "measure:" line per agent: name, harness, scenarios, median
and fastest suite in microseconds.
"""
import asyncio
import statistics
import sys
import time

from agentidem import read, write, test_agent_async
from agentidem.faults.injector import InjectedFaultError

class Bank:
    def __init__(self):
        self.payments = {"p1": {"id": "p1", "amount": 100, "status": "paid"}}
        self.refunds = []
        self.keys = {}
bank = Bank()

@read
async def get_payment(pid):
    return dict(bank.payments[pid])

@write(identity=lambda pid: pid)
async def refund(pid):
    p = bank.payments[pid]; p["status"] = "refunded"
    r = {"refund_id": f"re_{len(bank.refunds)+1}", "payment_id": pid, "amount": p["amount"]}
    bank.refunds.append(r); return r

@write(identity=lambda pid, key: key)
async def refund_with_key(pid, key):
    if key in bank.keys:
        return bank.keys[key]
    p = bank.payments[pid]; p["status"] = "refunded"
    r = {"refund_id": f"re_{len(bank.refunds)+1}", "payment_id": pid, "amount": p["amount"]}
    bank.refunds.append(r); bank.keys[key] = r; return r

async def naive(pid):
    p = await get_payment(pid)
    if p["status"] != "paid":
        return None
    last = None
    for _ in range(3):
        try:
            return await refund(pid)
        except InjectedFaultError as e:
            last = e
    raise last

async def keyed(pid):
    p = await get_payment(pid)
    if p["status"] != "paid":
        return None
    last = None
    for _ in range(3):
        try:
            return await refund_with_key(pid, "refund:" + pid)
        except InjectedFaultError as e:
            last = e
    raise last

ledger = {}
@read
async def count():
    return len(ledger)
@write(identity=lambda key, entry: key)
async def post(key, entry):
    ledger[key] = entry

async def ten():
    await count()
    for i in range(10):
        await post(f"entry-{i}", "x")

from agentidem.runtime.context import get_recorder
_last = [None]
def fresh_world(agent):
    # A fresh world per traced run, as Go's Setup gives one per scenario
    # (the SDK detects duplicates from the trace, so its duplicate delivery
    # still sees both deliveries' writes).
    async def run(*args):
        global bank, ledger
        rec = get_recorder()
        if rec is not _last[0]:
            _last[0] = rec
            bank = Bank(); ledger.clear()
        return await agent(*args)
    run.__name__ = agent.__name__
    return run

async def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    global bank, ledger
    for name, agent, args in (("naive refund", naive, ("p1",)), ("keyed refund", keyed, ("p1",)), ("ten writes", ten, ())):
        times, scen = [], 0
        for _ in range(n):
            # A fresh world per suite: the SDK has no per-scenario setup hook.
            bank = Bank(); ledger = {}
            t0 = time.perf_counter()
            rep = await test_agent_async(name, fresh_world(agent), *args)
            times.append(time.perf_counter() - t0)
            scen = rep.fault_count + 1
        times.sort()
        med = statistics.median(times) * 1e6
        print(f"measure: {name}|python sdk test_agent_async|{scen}|{med:.1f}|{times[0]*1e6:.1f}|safe={rep.safe}")

asyncio.run(main())
