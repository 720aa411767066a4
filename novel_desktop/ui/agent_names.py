"""The agents by the names the author knows them (the settings dialog's model table, the cost by purpose).

The names themselves are one table in the core (``llm/roles.py``), which the CLI and the pipeline's warnings
use too; the window shows them through tr().
"""

from __future__ import annotations

from novel_desktop.controllers.settings_controller import AgentRole

#: The agents as the author knows them, in pipeline order.
ROLE_NAMES: dict[AgentRole, str] = {role: role.label for role in AgentRole}
