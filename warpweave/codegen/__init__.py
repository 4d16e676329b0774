"""From schedule to program: tables, warp programs, simulator, printers, pictures."""
