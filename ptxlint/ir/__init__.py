"""The typed IR: module, functions, instructions (mixin-composed), operands."""
