"""Seeing more than pixels: the accessibility tree (:mod:`.tree`), its bounds corrections
(:mod:`.bounds`), OSWorld's forms of it (:mod:`.osworld_xml`) and set-of-marks (:mod:`.marks`)."""
