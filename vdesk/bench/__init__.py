"""``vdesk bench``: measurements on real desktops; nothing here asserts a timing.

* :mod:`vdesk.bench.speed`: how fast and how lean one desktop is, against the naive ways;
* :mod:`vdesk.bench.fleet`: capacity: many desktops at once, here and through Ray, and what a
  node holds;
* :mod:`vdesk.bench.threads`: the calls both run in threads at once, with deadlines.

What a desktop uses is read by :mod:`vdesk.usage`, which the Ray actors share.
"""
