"""The personal pool of htcd.testing, with this plugin's policy in its config."""

import pytest

pytest_plugins = ["htcd.testing"]


@pytest.fixture
def personal_pool_config() -> str:
    return "use POLICY : Example_Universe_Only\nEXAMPLE_GREETING = hi from the example universe\n"
