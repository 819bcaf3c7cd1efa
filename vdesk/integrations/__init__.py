"""vdesk desktops behind other frameworks' computer interfaces (:mod:`.openai_agents`)."""
