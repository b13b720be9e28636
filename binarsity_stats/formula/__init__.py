"""The formula door: bin()/C()/offset() terms, formulas to a design, replay on new data."""
