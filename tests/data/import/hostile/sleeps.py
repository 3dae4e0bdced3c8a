"""A problem whose top-level code takes a minute: `kforge import --timeout 3` stops it."""
import time

time.sleep(60)
