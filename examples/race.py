"""A bank account with a check-then-act race, as plain asyncio.

Two customers withdraw at random moments. Each checks the balance, then
awaits a (simulated) fraud check before debiting: if the second customer
checks while the first is still awaiting, both see enough money and the
account goes negative. Whether that happens depends on timing, which is
exactly what seedbed draws from the seed:

    seedbed sweep examples.race:main --seeds 200
    seedbed run examples.race:main --seed <a failing seed>
"""

from __future__ import annotations

import asyncio
import random


class Account:
    def __init__(self, balance: int) -> None:
        self.balance = balance

    async def withdraw(self, amount: int) -> bool:
        if self.balance < amount:
            return False
        await asyncio.sleep(random.uniform(0.001, 0.050))  # the fraud check
        self.balance -= amount
        return True


async def customer(account: Account, amount: int) -> bool:
    await asyncio.sleep(random.uniform(0.0, 0.5))  # arrives some time in the next half second
    return await account.withdraw(amount)


async def main() -> int:
    account = Account(100)
    async with asyncio.TaskGroup() as group:
        group.create_task(customer(account, 60))
        group.create_task(customer(account, 70))
    assert account.balance >= 0, f"balance went negative: {account.balance}"
    return account.balance
