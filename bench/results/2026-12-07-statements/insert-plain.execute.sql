EXECUTE e1('bench_step','bench',5,1,'{"n":7}',3);
