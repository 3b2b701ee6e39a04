"""Opcode classes, one module per PTX ISA instruction family."""
