# SPDX-License-Identifier: Apache-2.0
# Waveforms: re-run one test with FST tracing (scripts/waves.sh); the saved GTKWave views in
# waves/*.gtkw, their dumps and their screenshots (scripts/wave_shots.sh). docs/waves.md.
.PHONY: waves view wave-dumps wave-shots

waves: deps ## re-run TEST=Suite.Test [SEED=s FROM=c TO=c SCOPE=u_x DEPTH=d] with FST tracing into waves/<Suite>_<Test>.fst
	@scripts/waves.sh --build $(TRACE_BUILD) --jobs $(JOBS) $(if $(SEED),--seed '$(SEED)') \
	  $(if $(FROM),--from '$(FROM)') $(if $(TO),--to '$(TO)') $(if $(SCOPE),--scope '$(SCOPE)') \
	  $(if $(DEPTH),--depth '$(DEPTH)') '$(TEST)'

view: deps ## open a saved GTKWave view, VIEW=mac|mxu|hbm|accel (makes its dump first if missing)
	@test -n "$(VIEW)" || { echo "usage: make view VIEW=mac|mxu|hbm|accel (waves/<view>_*.gtkw)"; exit 2; }
	@scripts/wave_shots.sh --open $(if $(REDO),--fresh) '$(VIEW)'

wave-dumps: deps ## make the views' dumps (REDO=1: again) and check every signal of waves/*.gtkw is in them
	@scripts/wave_shots.sh --dumps $(if $(REDO),--fresh) $(VIEW)

wave-shots: deps ## screenshot each view under Xvfb into docs/img/waves_<view>.png (VIEW=... for one)
	@scripts/wave_shots.sh $(if $(REDO),--fresh) $(VIEW)
