//! Long generated bodies are split into chunks (over ~1,000 `let`s per function): a chain
//! of 120 four-bar loops (241 coordinates) whose `null_space`, `solve_dependent` and `gamma`
//! are chunked. The chunked code must compute what an independent computation gives: the
//! Jacobian against central differences of the residual, the null space against
//! nalgebra's SVD, `solve_dependent` against the Jacobian, at valid configurations along
//! the motion. (The mechanism text is written by a script: the chain of
//! `bench/src/families.rs::four_bar_chain(120)`.)

use mechgen::nalgebra::{DMatrix, DVector, SMatrix, SVector};
use mechgen::runtime::Mechanism;

mechgen::mechanism! {
    /// A chain of 120 four-bar loops; the rocker of loop i drives the crank of loop i+1.
    pub mod chain {
        param la = 1.0;
        param lb = 3.0;
        param lc = 2.5;
        param lg = 3.0;
        coord th0 = 1.0;
        independent th0;
        coord ph1 = 0.5856417730643092;
        coord th1 = 1.5546456692877555;
        coord ph2 = 0.5130761089570466;
        coord th2 = 1.719396202949583;
        coord ph3 = 0.5064922916689615;
        coord th3 = 1.782248154173569;
        coord ph4 = 0.5055368337984848;
        coord th4 = 1.8070420577097046;
        coord ph5 = 0.5053884533579576;
        coord th5 = 1.816911404380335;
        coord ph6 = 0.505364964826833;
        coord th6 = 1.8208518631395552;
        coord ph7 = 0.5053612219856343;
        coord th7 = 1.822426908941459;
        coord ph8 = 0.5053606240913011;
        coord th8 = 1.823056746945688;
        coord ph9 = 0.5053605284891483;
        coord th9 = 1.8233086534061023;
        coord ph10 = 0.5053605131966896;
        coord th10 = 1.8234094113986485;
        coord ph11 = 0.5053605107501455;
        coord th11 = 1.823449713861456;
        coord ph12 = 0.5053605103587147;
        coord th12 = 1.8234658347291361;
        coord ph13 = 0.505360510296086;
        coord th13 = 1.8234722830574182;
        coord ph14 = 0.5053605102860672;
        coord th14 = 1.8234748623857266;
        coord ph15 = 0.5053605102844633;
        coord th15 = 1.8234758941165696;
        coord ph16 = 0.5053605102842061;
        coord th16 = 1.8234763068088289;
        coord ph17 = 0.5053605102841657;
        coord th17 = 1.823476471885719;
        coord ph18 = 0.5053605102841582;
        coord th18 = 1.8234765379164737;
        coord ph19 = 0.5053605102841578;
        coord th19 = 1.8234765643287723;
        coord ph20 = 0.5053605102841577;
        coord th20 = 1.8234765748936916;
        coord ph21 = 0.5053605102841574;
        coord th21 = 1.8234765791196608;
        coord ph22 = 0.5053605102841576;
        coord th22 = 1.823476580810047;
        coord ph23 = 0.5053605102841568;
        coord th23 = 1.8234765814862064;
        coord ph24 = 0.5053605102841575;
        coord th24 = 1.8234765817566665;
        coord ph25 = 0.5053605102841574;
        coord th25 = 1.8234765818648528;
        coord ph26 = 0.5053605102841571;
        coord th26 = 1.8234765819081264;
        coord ph27 = 0.5053605102841577;
        coord th27 = 1.8234765819254333;
        coord ph28 = 0.5053605102841568;
        coord th28 = 1.8234765819323608;
        coord ph29 = 0.5053605102841568;
        coord th29 = 1.823476581935132;
        coord ph30 = 0.5053605102841577;
        coord th30 = 1.8234765819362355;
        coord ph31 = 0.505360510284157;
        coord th31 = 1.8234765819366816;
        coord ph32 = 0.5053605102841574;
        coord th32 = 1.823476581936858;
        coord ph33 = 0.5053605102841572;
        coord th33 = 1.8234765819369283;
        coord ph34 = 0.505360510284158;
        coord th34 = 1.8234765819369518;
        coord ph35 = 0.5053605102841576;
        coord th35 = 1.8234765819369636;
        coord ph36 = 0.5053605102841567;
        coord th36 = 1.8234765819369751;
        coord ph37 = 0.5053605102841573;
        coord th37 = 1.8234765819369754;
        coord ph38 = 0.5053605102841574;
        coord th38 = 1.8234765819369754;
        coord ph39 = 0.5053605102841574;
        coord th39 = 1.8234765819369754;
        coord ph40 = 0.5053605102841574;
        coord th40 = 1.8234765819369754;
        coord ph41 = 0.5053605102841574;
        coord th41 = 1.8234765819369754;
        coord ph42 = 0.5053605102841574;
        coord th42 = 1.8234765819369754;
        coord ph43 = 0.5053605102841574;
        coord th43 = 1.8234765819369754;
        coord ph44 = 0.5053605102841574;
        coord th44 = 1.8234765819369754;
        coord ph45 = 0.5053605102841574;
        coord th45 = 1.8234765819369754;
        coord ph46 = 0.5053605102841574;
        coord th46 = 1.8234765819369754;
        coord ph47 = 0.5053605102841574;
        coord th47 = 1.8234765819369754;
        coord ph48 = 0.5053605102841574;
        coord th48 = 1.8234765819369754;
        coord ph49 = 0.5053605102841574;
        coord th49 = 1.8234765819369754;
        coord ph50 = 0.5053605102841574;
        coord th50 = 1.8234765819369754;
        coord ph51 = 0.5053605102841574;
        coord th51 = 1.8234765819369754;
        coord ph52 = 0.5053605102841574;
        coord th52 = 1.8234765819369754;
        coord ph53 = 0.5053605102841574;
        coord th53 = 1.8234765819369754;
        coord ph54 = 0.5053605102841574;
        coord th54 = 1.8234765819369754;
        coord ph55 = 0.5053605102841574;
        coord th55 = 1.8234765819369754;
        coord ph56 = 0.5053605102841574;
        coord th56 = 1.8234765819369754;
        coord ph57 = 0.5053605102841574;
        coord th57 = 1.8234765819369754;
        coord ph58 = 0.5053605102841574;
        coord th58 = 1.8234765819369754;
        coord ph59 = 0.5053605102841574;
        coord th59 = 1.8234765819369754;
        coord ph60 = 0.5053605102841574;
        coord th60 = 1.8234765819369754;
        coord ph61 = 0.5053605102841574;
        coord th61 = 1.8234765819369754;
        coord ph62 = 0.5053605102841574;
        coord th62 = 1.8234765819369754;
        coord ph63 = 0.5053605102841574;
        coord th63 = 1.8234765819369754;
        coord ph64 = 0.5053605102841574;
        coord th64 = 1.8234765819369754;
        coord ph65 = 0.5053605102841574;
        coord th65 = 1.8234765819369754;
        coord ph66 = 0.5053605102841574;
        coord th66 = 1.8234765819369754;
        coord ph67 = 0.5053605102841574;
        coord th67 = 1.8234765819369754;
        coord ph68 = 0.5053605102841574;
        coord th68 = 1.8234765819369754;
        coord ph69 = 0.5053605102841574;
        coord th69 = 1.8234765819369754;
        coord ph70 = 0.5053605102841574;
        coord th70 = 1.8234765819369754;
        coord ph71 = 0.5053605102841574;
        coord th71 = 1.8234765819369754;
        coord ph72 = 0.5053605102841574;
        coord th72 = 1.8234765819369754;
        coord ph73 = 0.5053605102841574;
        coord th73 = 1.8234765819369754;
        coord ph74 = 0.5053605102841574;
        coord th74 = 1.8234765819369754;
        coord ph75 = 0.5053605102841574;
        coord th75 = 1.8234765819369754;
        coord ph76 = 0.5053605102841574;
        coord th76 = 1.8234765819369754;
        coord ph77 = 0.5053605102841574;
        coord th77 = 1.8234765819369754;
        coord ph78 = 0.5053605102841574;
        coord th78 = 1.8234765819369754;
        coord ph79 = 0.5053605102841574;
        coord th79 = 1.8234765819369754;
        coord ph80 = 0.5053605102841574;
        coord th80 = 1.8234765819369754;
        coord ph81 = 0.5053605102841574;
        coord th81 = 1.8234765819369754;
        coord ph82 = 0.5053605102841574;
        coord th82 = 1.8234765819369754;
        coord ph83 = 0.5053605102841574;
        coord th83 = 1.8234765819369754;
        coord ph84 = 0.5053605102841574;
        coord th84 = 1.8234765819369754;
        coord ph85 = 0.5053605102841574;
        coord th85 = 1.8234765819369754;
        coord ph86 = 0.5053605102841574;
        coord th86 = 1.8234765819369754;
        coord ph87 = 0.5053605102841574;
        coord th87 = 1.8234765819369754;
        coord ph88 = 0.5053605102841574;
        coord th88 = 1.8234765819369754;
        coord ph89 = 0.5053605102841574;
        coord th89 = 1.8234765819369754;
        coord ph90 = 0.5053605102841574;
        coord th90 = 1.8234765819369754;
        coord ph91 = 0.5053605102841574;
        coord th91 = 1.8234765819369754;
        coord ph92 = 0.5053605102841574;
        coord th92 = 1.8234765819369754;
        coord ph93 = 0.5053605102841574;
        coord th93 = 1.8234765819369754;
        coord ph94 = 0.5053605102841574;
        coord th94 = 1.8234765819369754;
        coord ph95 = 0.5053605102841574;
        coord th95 = 1.8234765819369754;
        coord ph96 = 0.5053605102841574;
        coord th96 = 1.8234765819369754;
        coord ph97 = 0.5053605102841574;
        coord th97 = 1.8234765819369754;
        coord ph98 = 0.5053605102841574;
        coord th98 = 1.8234765819369754;
        coord ph99 = 0.5053605102841574;
        coord th99 = 1.8234765819369754;
        coord ph100 = 0.5053605102841574;
        coord th100 = 1.8234765819369754;
        coord ph101 = 0.5053605102841574;
        coord th101 = 1.8234765819369754;
        coord ph102 = 0.5053605102841574;
        coord th102 = 1.8234765819369754;
        coord ph103 = 0.5053605102841574;
        coord th103 = 1.8234765819369754;
        coord ph104 = 0.5053605102841574;
        coord th104 = 1.8234765819369754;
        coord ph105 = 0.5053605102841574;
        coord th105 = 1.8234765819369754;
        coord ph106 = 0.5053605102841574;
        coord th106 = 1.8234765819369754;
        coord ph107 = 0.5053605102841574;
        coord th107 = 1.8234765819369754;
        coord ph108 = 0.5053605102841574;
        coord th108 = 1.8234765819369754;
        coord ph109 = 0.5053605102841574;
        coord th109 = 1.8234765819369754;
        coord ph110 = 0.5053605102841574;
        coord th110 = 1.8234765819369754;
        coord ph111 = 0.5053605102841574;
        coord th111 = 1.8234765819369754;
        coord ph112 = 0.5053605102841574;
        coord th112 = 1.8234765819369754;
        coord ph113 = 0.5053605102841574;
        coord th113 = 1.8234765819369754;
        coord ph114 = 0.5053605102841574;
        coord th114 = 1.8234765819369754;
        coord ph115 = 0.5053605102841574;
        coord th115 = 1.8234765819369754;
        coord ph116 = 0.5053605102841574;
        coord th116 = 1.8234765819369754;
        coord ph117 = 0.5053605102841574;
        coord th117 = 1.8234765819369754;
        coord ph118 = 0.5053605102841574;
        coord th118 = 1.8234765819369754;
        coord ph119 = 0.5053605102841574;
        coord th119 = 1.8234765819369754;
        coord ph120 = 0.5053605102841574;
        coord th120 = 1.8234765819369754;
        constraint vec2(0.0 + la * cos(th0), la * sin(th0)) + vec2(lb * cos(ph1), lb * sin(ph1)) == vec2(0.0 + lg + lc * cos(th1), lc * sin(th1));
        constraint vec2(4.0 + la * cos(th1), la * sin(th1)) + vec2(lb * cos(ph2), lb * sin(ph2)) == vec2(4.0 + lg + lc * cos(th2), lc * sin(th2));
        constraint vec2(8.0 + la * cos(th2), la * sin(th2)) + vec2(lb * cos(ph3), lb * sin(ph3)) == vec2(8.0 + lg + lc * cos(th3), lc * sin(th3));
        constraint vec2(12.0 + la * cos(th3), la * sin(th3)) + vec2(lb * cos(ph4), lb * sin(ph4)) == vec2(12.0 + lg + lc * cos(th4), lc * sin(th4));
        constraint vec2(16.0 + la * cos(th4), la * sin(th4)) + vec2(lb * cos(ph5), lb * sin(ph5)) == vec2(16.0 + lg + lc * cos(th5), lc * sin(th5));
        constraint vec2(20.0 + la * cos(th5), la * sin(th5)) + vec2(lb * cos(ph6), lb * sin(ph6)) == vec2(20.0 + lg + lc * cos(th6), lc * sin(th6));
        constraint vec2(24.0 + la * cos(th6), la * sin(th6)) + vec2(lb * cos(ph7), lb * sin(ph7)) == vec2(24.0 + lg + lc * cos(th7), lc * sin(th7));
        constraint vec2(28.0 + la * cos(th7), la * sin(th7)) + vec2(lb * cos(ph8), lb * sin(ph8)) == vec2(28.0 + lg + lc * cos(th8), lc * sin(th8));
        constraint vec2(32.0 + la * cos(th8), la * sin(th8)) + vec2(lb * cos(ph9), lb * sin(ph9)) == vec2(32.0 + lg + lc * cos(th9), lc * sin(th9));
        constraint vec2(36.0 + la * cos(th9), la * sin(th9)) + vec2(lb * cos(ph10), lb * sin(ph10)) == vec2(36.0 + lg + lc * cos(th10), lc * sin(th10));
        constraint vec2(40.0 + la * cos(th10), la * sin(th10)) + vec2(lb * cos(ph11), lb * sin(ph11)) == vec2(40.0 + lg + lc * cos(th11), lc * sin(th11));
        constraint vec2(44.0 + la * cos(th11), la * sin(th11)) + vec2(lb * cos(ph12), lb * sin(ph12)) == vec2(44.0 + lg + lc * cos(th12), lc * sin(th12));
        constraint vec2(48.0 + la * cos(th12), la * sin(th12)) + vec2(lb * cos(ph13), lb * sin(ph13)) == vec2(48.0 + lg + lc * cos(th13), lc * sin(th13));
        constraint vec2(52.0 + la * cos(th13), la * sin(th13)) + vec2(lb * cos(ph14), lb * sin(ph14)) == vec2(52.0 + lg + lc * cos(th14), lc * sin(th14));
        constraint vec2(56.0 + la * cos(th14), la * sin(th14)) + vec2(lb * cos(ph15), lb * sin(ph15)) == vec2(56.0 + lg + lc * cos(th15), lc * sin(th15));
        constraint vec2(60.0 + la * cos(th15), la * sin(th15)) + vec2(lb * cos(ph16), lb * sin(ph16)) == vec2(60.0 + lg + lc * cos(th16), lc * sin(th16));
        constraint vec2(64.0 + la * cos(th16), la * sin(th16)) + vec2(lb * cos(ph17), lb * sin(ph17)) == vec2(64.0 + lg + lc * cos(th17), lc * sin(th17));
        constraint vec2(68.0 + la * cos(th17), la * sin(th17)) + vec2(lb * cos(ph18), lb * sin(ph18)) == vec2(68.0 + lg + lc * cos(th18), lc * sin(th18));
        constraint vec2(72.0 + la * cos(th18), la * sin(th18)) + vec2(lb * cos(ph19), lb * sin(ph19)) == vec2(72.0 + lg + lc * cos(th19), lc * sin(th19));
        constraint vec2(76.0 + la * cos(th19), la * sin(th19)) + vec2(lb * cos(ph20), lb * sin(ph20)) == vec2(76.0 + lg + lc * cos(th20), lc * sin(th20));
        constraint vec2(80.0 + la * cos(th20), la * sin(th20)) + vec2(lb * cos(ph21), lb * sin(ph21)) == vec2(80.0 + lg + lc * cos(th21), lc * sin(th21));
        constraint vec2(84.0 + la * cos(th21), la * sin(th21)) + vec2(lb * cos(ph22), lb * sin(ph22)) == vec2(84.0 + lg + lc * cos(th22), lc * sin(th22));
        constraint vec2(88.0 + la * cos(th22), la * sin(th22)) + vec2(lb * cos(ph23), lb * sin(ph23)) == vec2(88.0 + lg + lc * cos(th23), lc * sin(th23));
        constraint vec2(92.0 + la * cos(th23), la * sin(th23)) + vec2(lb * cos(ph24), lb * sin(ph24)) == vec2(92.0 + lg + lc * cos(th24), lc * sin(th24));
        constraint vec2(96.0 + la * cos(th24), la * sin(th24)) + vec2(lb * cos(ph25), lb * sin(ph25)) == vec2(96.0 + lg + lc * cos(th25), lc * sin(th25));
        constraint vec2(100.0 + la * cos(th25), la * sin(th25)) + vec2(lb * cos(ph26), lb * sin(ph26)) == vec2(100.0 + lg + lc * cos(th26), lc * sin(th26));
        constraint vec2(104.0 + la * cos(th26), la * sin(th26)) + vec2(lb * cos(ph27), lb * sin(ph27)) == vec2(104.0 + lg + lc * cos(th27), lc * sin(th27));
        constraint vec2(108.0 + la * cos(th27), la * sin(th27)) + vec2(lb * cos(ph28), lb * sin(ph28)) == vec2(108.0 + lg + lc * cos(th28), lc * sin(th28));
        constraint vec2(112.0 + la * cos(th28), la * sin(th28)) + vec2(lb * cos(ph29), lb * sin(ph29)) == vec2(112.0 + lg + lc * cos(th29), lc * sin(th29));
        constraint vec2(116.0 + la * cos(th29), la * sin(th29)) + vec2(lb * cos(ph30), lb * sin(ph30)) == vec2(116.0 + lg + lc * cos(th30), lc * sin(th30));
        constraint vec2(120.0 + la * cos(th30), la * sin(th30)) + vec2(lb * cos(ph31), lb * sin(ph31)) == vec2(120.0 + lg + lc * cos(th31), lc * sin(th31));
        constraint vec2(124.0 + la * cos(th31), la * sin(th31)) + vec2(lb * cos(ph32), lb * sin(ph32)) == vec2(124.0 + lg + lc * cos(th32), lc * sin(th32));
        constraint vec2(128.0 + la * cos(th32), la * sin(th32)) + vec2(lb * cos(ph33), lb * sin(ph33)) == vec2(128.0 + lg + lc * cos(th33), lc * sin(th33));
        constraint vec2(132.0 + la * cos(th33), la * sin(th33)) + vec2(lb * cos(ph34), lb * sin(ph34)) == vec2(132.0 + lg + lc * cos(th34), lc * sin(th34));
        constraint vec2(136.0 + la * cos(th34), la * sin(th34)) + vec2(lb * cos(ph35), lb * sin(ph35)) == vec2(136.0 + lg + lc * cos(th35), lc * sin(th35));
        constraint vec2(140.0 + la * cos(th35), la * sin(th35)) + vec2(lb * cos(ph36), lb * sin(ph36)) == vec2(140.0 + lg + lc * cos(th36), lc * sin(th36));
        constraint vec2(144.0 + la * cos(th36), la * sin(th36)) + vec2(lb * cos(ph37), lb * sin(ph37)) == vec2(144.0 + lg + lc * cos(th37), lc * sin(th37));
        constraint vec2(148.0 + la * cos(th37), la * sin(th37)) + vec2(lb * cos(ph38), lb * sin(ph38)) == vec2(148.0 + lg + lc * cos(th38), lc * sin(th38));
        constraint vec2(152.0 + la * cos(th38), la * sin(th38)) + vec2(lb * cos(ph39), lb * sin(ph39)) == vec2(152.0 + lg + lc * cos(th39), lc * sin(th39));
        constraint vec2(156.0 + la * cos(th39), la * sin(th39)) + vec2(lb * cos(ph40), lb * sin(ph40)) == vec2(156.0 + lg + lc * cos(th40), lc * sin(th40));
        constraint vec2(160.0 + la * cos(th40), la * sin(th40)) + vec2(lb * cos(ph41), lb * sin(ph41)) == vec2(160.0 + lg + lc * cos(th41), lc * sin(th41));
        constraint vec2(164.0 + la * cos(th41), la * sin(th41)) + vec2(lb * cos(ph42), lb * sin(ph42)) == vec2(164.0 + lg + lc * cos(th42), lc * sin(th42));
        constraint vec2(168.0 + la * cos(th42), la * sin(th42)) + vec2(lb * cos(ph43), lb * sin(ph43)) == vec2(168.0 + lg + lc * cos(th43), lc * sin(th43));
        constraint vec2(172.0 + la * cos(th43), la * sin(th43)) + vec2(lb * cos(ph44), lb * sin(ph44)) == vec2(172.0 + lg + lc * cos(th44), lc * sin(th44));
        constraint vec2(176.0 + la * cos(th44), la * sin(th44)) + vec2(lb * cos(ph45), lb * sin(ph45)) == vec2(176.0 + lg + lc * cos(th45), lc * sin(th45));
        constraint vec2(180.0 + la * cos(th45), la * sin(th45)) + vec2(lb * cos(ph46), lb * sin(ph46)) == vec2(180.0 + lg + lc * cos(th46), lc * sin(th46));
        constraint vec2(184.0 + la * cos(th46), la * sin(th46)) + vec2(lb * cos(ph47), lb * sin(ph47)) == vec2(184.0 + lg + lc * cos(th47), lc * sin(th47));
        constraint vec2(188.0 + la * cos(th47), la * sin(th47)) + vec2(lb * cos(ph48), lb * sin(ph48)) == vec2(188.0 + lg + lc * cos(th48), lc * sin(th48));
        constraint vec2(192.0 + la * cos(th48), la * sin(th48)) + vec2(lb * cos(ph49), lb * sin(ph49)) == vec2(192.0 + lg + lc * cos(th49), lc * sin(th49));
        constraint vec2(196.0 + la * cos(th49), la * sin(th49)) + vec2(lb * cos(ph50), lb * sin(ph50)) == vec2(196.0 + lg + lc * cos(th50), lc * sin(th50));
        constraint vec2(200.0 + la * cos(th50), la * sin(th50)) + vec2(lb * cos(ph51), lb * sin(ph51)) == vec2(200.0 + lg + lc * cos(th51), lc * sin(th51));
        constraint vec2(204.0 + la * cos(th51), la * sin(th51)) + vec2(lb * cos(ph52), lb * sin(ph52)) == vec2(204.0 + lg + lc * cos(th52), lc * sin(th52));
        constraint vec2(208.0 + la * cos(th52), la * sin(th52)) + vec2(lb * cos(ph53), lb * sin(ph53)) == vec2(208.0 + lg + lc * cos(th53), lc * sin(th53));
        constraint vec2(212.0 + la * cos(th53), la * sin(th53)) + vec2(lb * cos(ph54), lb * sin(ph54)) == vec2(212.0 + lg + lc * cos(th54), lc * sin(th54));
        constraint vec2(216.0 + la * cos(th54), la * sin(th54)) + vec2(lb * cos(ph55), lb * sin(ph55)) == vec2(216.0 + lg + lc * cos(th55), lc * sin(th55));
        constraint vec2(220.0 + la * cos(th55), la * sin(th55)) + vec2(lb * cos(ph56), lb * sin(ph56)) == vec2(220.0 + lg + lc * cos(th56), lc * sin(th56));
        constraint vec2(224.0 + la * cos(th56), la * sin(th56)) + vec2(lb * cos(ph57), lb * sin(ph57)) == vec2(224.0 + lg + lc * cos(th57), lc * sin(th57));
        constraint vec2(228.0 + la * cos(th57), la * sin(th57)) + vec2(lb * cos(ph58), lb * sin(ph58)) == vec2(228.0 + lg + lc * cos(th58), lc * sin(th58));
        constraint vec2(232.0 + la * cos(th58), la * sin(th58)) + vec2(lb * cos(ph59), lb * sin(ph59)) == vec2(232.0 + lg + lc * cos(th59), lc * sin(th59));
        constraint vec2(236.0 + la * cos(th59), la * sin(th59)) + vec2(lb * cos(ph60), lb * sin(ph60)) == vec2(236.0 + lg + lc * cos(th60), lc * sin(th60));
        constraint vec2(240.0 + la * cos(th60), la * sin(th60)) + vec2(lb * cos(ph61), lb * sin(ph61)) == vec2(240.0 + lg + lc * cos(th61), lc * sin(th61));
        constraint vec2(244.0 + la * cos(th61), la * sin(th61)) + vec2(lb * cos(ph62), lb * sin(ph62)) == vec2(244.0 + lg + lc * cos(th62), lc * sin(th62));
        constraint vec2(248.0 + la * cos(th62), la * sin(th62)) + vec2(lb * cos(ph63), lb * sin(ph63)) == vec2(248.0 + lg + lc * cos(th63), lc * sin(th63));
        constraint vec2(252.0 + la * cos(th63), la * sin(th63)) + vec2(lb * cos(ph64), lb * sin(ph64)) == vec2(252.0 + lg + lc * cos(th64), lc * sin(th64));
        constraint vec2(256.0 + la * cos(th64), la * sin(th64)) + vec2(lb * cos(ph65), lb * sin(ph65)) == vec2(256.0 + lg + lc * cos(th65), lc * sin(th65));
        constraint vec2(260.0 + la * cos(th65), la * sin(th65)) + vec2(lb * cos(ph66), lb * sin(ph66)) == vec2(260.0 + lg + lc * cos(th66), lc * sin(th66));
        constraint vec2(264.0 + la * cos(th66), la * sin(th66)) + vec2(lb * cos(ph67), lb * sin(ph67)) == vec2(264.0 + lg + lc * cos(th67), lc * sin(th67));
        constraint vec2(268.0 + la * cos(th67), la * sin(th67)) + vec2(lb * cos(ph68), lb * sin(ph68)) == vec2(268.0 + lg + lc * cos(th68), lc * sin(th68));
        constraint vec2(272.0 + la * cos(th68), la * sin(th68)) + vec2(lb * cos(ph69), lb * sin(ph69)) == vec2(272.0 + lg + lc * cos(th69), lc * sin(th69));
        constraint vec2(276.0 + la * cos(th69), la * sin(th69)) + vec2(lb * cos(ph70), lb * sin(ph70)) == vec2(276.0 + lg + lc * cos(th70), lc * sin(th70));
        constraint vec2(280.0 + la * cos(th70), la * sin(th70)) + vec2(lb * cos(ph71), lb * sin(ph71)) == vec2(280.0 + lg + lc * cos(th71), lc * sin(th71));
        constraint vec2(284.0 + la * cos(th71), la * sin(th71)) + vec2(lb * cos(ph72), lb * sin(ph72)) == vec2(284.0 + lg + lc * cos(th72), lc * sin(th72));
        constraint vec2(288.0 + la * cos(th72), la * sin(th72)) + vec2(lb * cos(ph73), lb * sin(ph73)) == vec2(288.0 + lg + lc * cos(th73), lc * sin(th73));
        constraint vec2(292.0 + la * cos(th73), la * sin(th73)) + vec2(lb * cos(ph74), lb * sin(ph74)) == vec2(292.0 + lg + lc * cos(th74), lc * sin(th74));
        constraint vec2(296.0 + la * cos(th74), la * sin(th74)) + vec2(lb * cos(ph75), lb * sin(ph75)) == vec2(296.0 + lg + lc * cos(th75), lc * sin(th75));
        constraint vec2(300.0 + la * cos(th75), la * sin(th75)) + vec2(lb * cos(ph76), lb * sin(ph76)) == vec2(300.0 + lg + lc * cos(th76), lc * sin(th76));
        constraint vec2(304.0 + la * cos(th76), la * sin(th76)) + vec2(lb * cos(ph77), lb * sin(ph77)) == vec2(304.0 + lg + lc * cos(th77), lc * sin(th77));
        constraint vec2(308.0 + la * cos(th77), la * sin(th77)) + vec2(lb * cos(ph78), lb * sin(ph78)) == vec2(308.0 + lg + lc * cos(th78), lc * sin(th78));
        constraint vec2(312.0 + la * cos(th78), la * sin(th78)) + vec2(lb * cos(ph79), lb * sin(ph79)) == vec2(312.0 + lg + lc * cos(th79), lc * sin(th79));
        constraint vec2(316.0 + la * cos(th79), la * sin(th79)) + vec2(lb * cos(ph80), lb * sin(ph80)) == vec2(316.0 + lg + lc * cos(th80), lc * sin(th80));
        constraint vec2(320.0 + la * cos(th80), la * sin(th80)) + vec2(lb * cos(ph81), lb * sin(ph81)) == vec2(320.0 + lg + lc * cos(th81), lc * sin(th81));
        constraint vec2(324.0 + la * cos(th81), la * sin(th81)) + vec2(lb * cos(ph82), lb * sin(ph82)) == vec2(324.0 + lg + lc * cos(th82), lc * sin(th82));
        constraint vec2(328.0 + la * cos(th82), la * sin(th82)) + vec2(lb * cos(ph83), lb * sin(ph83)) == vec2(328.0 + lg + lc * cos(th83), lc * sin(th83));
        constraint vec2(332.0 + la * cos(th83), la * sin(th83)) + vec2(lb * cos(ph84), lb * sin(ph84)) == vec2(332.0 + lg + lc * cos(th84), lc * sin(th84));
        constraint vec2(336.0 + la * cos(th84), la * sin(th84)) + vec2(lb * cos(ph85), lb * sin(ph85)) == vec2(336.0 + lg + lc * cos(th85), lc * sin(th85));
        constraint vec2(340.0 + la * cos(th85), la * sin(th85)) + vec2(lb * cos(ph86), lb * sin(ph86)) == vec2(340.0 + lg + lc * cos(th86), lc * sin(th86));
        constraint vec2(344.0 + la * cos(th86), la * sin(th86)) + vec2(lb * cos(ph87), lb * sin(ph87)) == vec2(344.0 + lg + lc * cos(th87), lc * sin(th87));
        constraint vec2(348.0 + la * cos(th87), la * sin(th87)) + vec2(lb * cos(ph88), lb * sin(ph88)) == vec2(348.0 + lg + lc * cos(th88), lc * sin(th88));
        constraint vec2(352.0 + la * cos(th88), la * sin(th88)) + vec2(lb * cos(ph89), lb * sin(ph89)) == vec2(352.0 + lg + lc * cos(th89), lc * sin(th89));
        constraint vec2(356.0 + la * cos(th89), la * sin(th89)) + vec2(lb * cos(ph90), lb * sin(ph90)) == vec2(356.0 + lg + lc * cos(th90), lc * sin(th90));
        constraint vec2(360.0 + la * cos(th90), la * sin(th90)) + vec2(lb * cos(ph91), lb * sin(ph91)) == vec2(360.0 + lg + lc * cos(th91), lc * sin(th91));
        constraint vec2(364.0 + la * cos(th91), la * sin(th91)) + vec2(lb * cos(ph92), lb * sin(ph92)) == vec2(364.0 + lg + lc * cos(th92), lc * sin(th92));
        constraint vec2(368.0 + la * cos(th92), la * sin(th92)) + vec2(lb * cos(ph93), lb * sin(ph93)) == vec2(368.0 + lg + lc * cos(th93), lc * sin(th93));
        constraint vec2(372.0 + la * cos(th93), la * sin(th93)) + vec2(lb * cos(ph94), lb * sin(ph94)) == vec2(372.0 + lg + lc * cos(th94), lc * sin(th94));
        constraint vec2(376.0 + la * cos(th94), la * sin(th94)) + vec2(lb * cos(ph95), lb * sin(ph95)) == vec2(376.0 + lg + lc * cos(th95), lc * sin(th95));
        constraint vec2(380.0 + la * cos(th95), la * sin(th95)) + vec2(lb * cos(ph96), lb * sin(ph96)) == vec2(380.0 + lg + lc * cos(th96), lc * sin(th96));
        constraint vec2(384.0 + la * cos(th96), la * sin(th96)) + vec2(lb * cos(ph97), lb * sin(ph97)) == vec2(384.0 + lg + lc * cos(th97), lc * sin(th97));
        constraint vec2(388.0 + la * cos(th97), la * sin(th97)) + vec2(lb * cos(ph98), lb * sin(ph98)) == vec2(388.0 + lg + lc * cos(th98), lc * sin(th98));
        constraint vec2(392.0 + la * cos(th98), la * sin(th98)) + vec2(lb * cos(ph99), lb * sin(ph99)) == vec2(392.0 + lg + lc * cos(th99), lc * sin(th99));
        constraint vec2(396.0 + la * cos(th99), la * sin(th99)) + vec2(lb * cos(ph100), lb * sin(ph100)) == vec2(396.0 + lg + lc * cos(th100), lc * sin(th100));
        constraint vec2(400.0 + la * cos(th100), la * sin(th100)) + vec2(lb * cos(ph101), lb * sin(ph101)) == vec2(400.0 + lg + lc * cos(th101), lc * sin(th101));
        constraint vec2(404.0 + la * cos(th101), la * sin(th101)) + vec2(lb * cos(ph102), lb * sin(ph102)) == vec2(404.0 + lg + lc * cos(th102), lc * sin(th102));
        constraint vec2(408.0 + la * cos(th102), la * sin(th102)) + vec2(lb * cos(ph103), lb * sin(ph103)) == vec2(408.0 + lg + lc * cos(th103), lc * sin(th103));
        constraint vec2(412.0 + la * cos(th103), la * sin(th103)) + vec2(lb * cos(ph104), lb * sin(ph104)) == vec2(412.0 + lg + lc * cos(th104), lc * sin(th104));
        constraint vec2(416.0 + la * cos(th104), la * sin(th104)) + vec2(lb * cos(ph105), lb * sin(ph105)) == vec2(416.0 + lg + lc * cos(th105), lc * sin(th105));
        constraint vec2(420.0 + la * cos(th105), la * sin(th105)) + vec2(lb * cos(ph106), lb * sin(ph106)) == vec2(420.0 + lg + lc * cos(th106), lc * sin(th106));
        constraint vec2(424.0 + la * cos(th106), la * sin(th106)) + vec2(lb * cos(ph107), lb * sin(ph107)) == vec2(424.0 + lg + lc * cos(th107), lc * sin(th107));
        constraint vec2(428.0 + la * cos(th107), la * sin(th107)) + vec2(lb * cos(ph108), lb * sin(ph108)) == vec2(428.0 + lg + lc * cos(th108), lc * sin(th108));
        constraint vec2(432.0 + la * cos(th108), la * sin(th108)) + vec2(lb * cos(ph109), lb * sin(ph109)) == vec2(432.0 + lg + lc * cos(th109), lc * sin(th109));
        constraint vec2(436.0 + la * cos(th109), la * sin(th109)) + vec2(lb * cos(ph110), lb * sin(ph110)) == vec2(436.0 + lg + lc * cos(th110), lc * sin(th110));
        constraint vec2(440.0 + la * cos(th110), la * sin(th110)) + vec2(lb * cos(ph111), lb * sin(ph111)) == vec2(440.0 + lg + lc * cos(th111), lc * sin(th111));
        constraint vec2(444.0 + la * cos(th111), la * sin(th111)) + vec2(lb * cos(ph112), lb * sin(ph112)) == vec2(444.0 + lg + lc * cos(th112), lc * sin(th112));
        constraint vec2(448.0 + la * cos(th112), la * sin(th112)) + vec2(lb * cos(ph113), lb * sin(ph113)) == vec2(448.0 + lg + lc * cos(th113), lc * sin(th113));
        constraint vec2(452.0 + la * cos(th113), la * sin(th113)) + vec2(lb * cos(ph114), lb * sin(ph114)) == vec2(452.0 + lg + lc * cos(th114), lc * sin(th114));
        constraint vec2(456.0 + la * cos(th114), la * sin(th114)) + vec2(lb * cos(ph115), lb * sin(ph115)) == vec2(456.0 + lg + lc * cos(th115), lc * sin(th115));
        constraint vec2(460.0 + la * cos(th115), la * sin(th115)) + vec2(lb * cos(ph116), lb * sin(ph116)) == vec2(460.0 + lg + lc * cos(th116), lc * sin(th116));
        constraint vec2(464.0 + la * cos(th116), la * sin(th116)) + vec2(lb * cos(ph117), lb * sin(ph117)) == vec2(464.0 + lg + lc * cos(th117), lc * sin(th117));
        constraint vec2(468.0 + la * cos(th117), la * sin(th117)) + vec2(lb * cos(ph118), lb * sin(ph118)) == vec2(468.0 + lg + lc * cos(th118), lc * sin(th118));
        constraint vec2(472.0 + la * cos(th118), la * sin(th118)) + vec2(lb * cos(ph119), lb * sin(ph119)) == vec2(472.0 + lg + lc * cos(th119), lc * sin(th119));
        constraint vec2(476.0 + la * cos(th119), la * sin(th119)) + vec2(lb * cos(ph120), lb * sin(ph120)) == vec2(476.0 + lg + lc * cos(th120), lc * sin(th120));
    }
}

const NQ: usize = 241;
const NC: usize = 240;
const DOF: usize = 1;
type M = chain::Model;

/// A configuration on the constraints: the nominal with `th0` moved by `d`, the rest
/// projected by Newton's method on the dependent coordinates with nalgebra's
/// full-pivoting LU (not the generated one).
fn configuration(d: f64, p: &chain::Params) -> SVector<f64, NQ> {
    let mut q = <M as Mechanism<NQ, NC, DOF>>::nominal_q();
    q[0] += d;
    for _ in 0..50 {
        let r = chain::residual(&q, p, 0.0);
        if r.norm() <= 1e-12 {
            return q;
        }
        let j = DMatrix::from_column_slice(
            NC,
            NQ - 1,
            chain::jacobian(&q, p, 0.0).columns(1, NQ - 1).as_slice(),
        );
        let step = j
            .full_piv_lu()
            .solve(&DVector::from_column_slice(r.as_slice()))
            .expect("the dependent block is regular");
        for k in 1..NQ {
            q[k] -= step[k - 1];
        }
    }
    panic!(
        "configuration {d} did not project: |C| = {:e}",
        chain::residual(&q, p, 0.0).norm()
    );
}

#[test]
fn chunked_functions_compute_the_right_numbers() {
    // The 240×241 Jacobian is half a megabyte by value: a debug build's temporaries need
    // more than a test thread's default stack.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(check_chain)
        .expect("thread")
        .join()
        .expect("the checks passed");
}

fn check_chain() {
    let p = chain::Params::default();
    for &d in &[0.0, 0.2, -0.3, 0.45] {
        let q = configuration(d, &p);
        // Jacobian against central differences of the residual.
        let jac = chain::jacobian(&q, &p, 0.0);
        let h = 1e-6;
        for k in (0..NQ).step_by(7) {
            let (mut a, mut b) = (q, q);
            a[k] += h;
            b[k] -= h;
            let fd = (chain::residual(&a, &p, 0.0) - chain::residual(&b, &p, 0.0)) / (2.0 * h);
            let err = (fd - jac.column(k)).amax();
            assert!(
                err <= 1e-7,
                "d = {d}: column {k} of the Jacobian off by {err:e}"
            );
        }
        // Null space against the SVD's (1-DOF: one direction), and C_J D = 0.
        let (dm, health) = <M as Mechanism<NQ, NC, DOF>>::null_space(&q, &p, 0.0);
        assert!(health > 0.0 && health.is_finite(), "health {health}");
        let cjd = (jac * dm).amax() / dm.amax();
        assert!(cjd <= 1e-10, "d = {d}: |C_J D| / |D| = {cjd:e}");
        // nalgebra's null vector: x_dep = −J_dep⁻¹ J[:, 0] with x[th0] = 1.
        let jdep = DMatrix::from_column_slice(NC, NQ - 1, jac.columns(1, NQ - 1).as_slice());
        let col0 = DVector::from_column_slice(jac.column(0).as_slice());
        let xdep = jdep.full_piv_lu().solve(&(-col0)).expect("regular");
        let mut n = DVector::zeros(NQ);
        n[0] = 1.0;
        n.rows_mut(1, NQ - 1).copy_from(&xdep);
        let dn = DVector::from_column_slice(dm.as_slice());
        let sin_angle = (&dn / dn.norm() - &n / n.norm()).norm();
        assert!(
            sin_angle <= 1e-9,
            "d = {d}: angle to nalgebra's null vector {sin_angle:e}"
        );
        assert_eq!(dm[(0, 0)], 1.0, "independent row of D");
        // solve_dependent: C_J x = rhs with x[th0] = 0.
        let rhs = SVector::<f64, NC>::from_fn(|i, _| ((i * 37 % 11) as f64 - 5.0) * 0.1);
        let x: SMatrix<f64, NQ, 1> =
            <M as Mechanism<NQ, NC, DOF>>::solve_dependent(&q, &p, 0.0, &rhs);
        assert_eq!(x[0], 0.0);
        let err = (jac * x - rhs).amax();
        assert!(err <= 1e-9, "d = {d}: |C_J x - b| = {err:e}");
    }
}
