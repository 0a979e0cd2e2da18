"""Pure text functions (no ORM, no requests): what editors' text must be and how it reads."""
