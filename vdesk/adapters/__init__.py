"""Adapters: what models emit, turned into BaseActions. The registry of formats is
:mod:`vdesk.adapters.formats`; each model's own module holds its parser."""
