"""seedbed's version, written into every trace header."""

VERSION = "0.1.0"
